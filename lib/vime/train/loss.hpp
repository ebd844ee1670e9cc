// slime's losses (spec §4; slime/utils/ppo_utils.py, backends/megatron_utils/loss.py) as pure
// tensor functions over the response tokens of a micro-batch, flattened to [num_tokens].
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vime/train_hooks.hpp"

namespace vime::train {

struct PerTokenLoss {
  at::Tensor loss;      // [num_tokens]
  at::Tensor clipfrac;  // [num_tokens] 0/1
};

// PPO clip: max(−ρA, −clip(ρ, 1−eps_clip, 1+eps_clip_high)·A), ρ = exp(−ppo_kl); dual clip with
// eps_clip_c (> 1) for A < 0.
PerTokenLoss ppo_policy_loss(const at::Tensor& ppo_kl, const at::Tensor& advantages,
                             double eps_clip, double eps_clip_high,
                             std::optional<double> eps_clip_c = std::nullopt);
// CISPO: −stopgrad(clip(ρ, 1−eps_clip, 1+eps_clip_high))·A·log_probs.
PerTokenLoss cispo_loss(const at::Tensor& ppo_kl, const at::Tensor& log_probs,
                        const at::Tensor& advantages, double eps_clip, double eps_clip_high);
// GSPO / OPSM: s_i = Σ_t ppo_kl·m / max(Σm, 1) per sample, broadcast to the sample's tokens.
at::Tensor sequence_mean_kl(const at::Tensor& ppo_kl, const std::vector<at::Tensor>& loss_masks);
// OPSM: 0 where A < 0 and s_i > delta, else 1.
at::Tensor opsm_mask(const at::Tensor& advantages, const at::Tensor& sequence_kl, double delta);

enum class KlType { kK1, kK2, kK3, kLowVarKl };
KlType parse_kl_type(const std::string& name);  // "k1" | "k2" | "k3" | "low_var_kl"
// KL estimate per token with δ = log_probs − base; low_var_kl is clamped to ±10.
at::Tensor approx_kl(const at::Tensor& log_probs, const at::Tensor& base_log_probs, KlType type);

// Truncated importance sampling: w = clamp(exp(old − rollout), low, high), with metrics tis,
// tis_clipfrac, tis_abs. icepop: w = ratio inside [low, high], else 0 (metrics ice_*).
TisOutput vanilla_tis(const TisInputs& inputs, double clip_low, double clip_high);
TisOutput icepop_tis(const TisInputs& inputs, double low, double high);

// Critic: Vc = V_old + clamp(V − V_old, ±clip); loss = max((Vc−G)², (V−G)²) (no ½);
// clipfrac = [|V − V_old| > clip].
PerTokenLoss value_loss(const at::Tensor& values, const at::Tensor& old_values,
                        const at::Tensor& returns, double value_clip);

// Values of the response tokens from a value head's output [total_tokens, 1] of one sample:
// the row before each response token (no temperature).
at::Tensor response_values(const at::Tensor& value_head_out, int64_t total_length,
                           int64_t response_length);

// slime's get_sum_of_sample_mean: Σ_i Σ_t x·m / max(rollout_mask_sums_i, 1), or Σ x·m with
// per-token loss. x is [Σ response_lengths] in sample order.
SumOfSampleMean sum_of_sample_mean(const std::vector<int64_t>& response_lengths,
                                   const std::vector<at::Tensor>& loss_masks,
                                   const std::vector<double>& rollout_mask_sums,
                                   bool calculate_per_token_loss);

}  // namespace vime::train
