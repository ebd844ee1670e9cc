// slime's losses (slime/utils/ppo_utils.py, backends/megatron_utils/loss.py): the loss
// functions of a micro-batch (policy_loss_function, sft_loss_function, value_loss_function, a
// custom loss, and loss_function, which picks the actor's by --loss-type), and the pure tensor
// functions they are made of, over the response tokens of a micro-batch flattened to [num_tokens].
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vime/train/log_probs.hpp"
#include "vime/train/loss_batch.hpp"
#include "vime/train/train_context.hpp"
#include "vime/train/train_options.hpp"
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

// slime's get_sum_of_sample_mean over a micro-batch (its rollout_mask_sums as denominators).
SumOfSampleMean sum_of_sample_mean(const LossBatch& batch, bool calculate_per_token_loss);

// What a loss reads from the model's forward over a micro-batch.
struct ForwardOutput {
  at::Tensor logits;       // [total_tokens, vocab]: only for a custom loss (else undefined)
  TokenLogProbs response;  // [Σ response_lengths]: each response token's log-prob and entropy
};

// The loss functions of one micro-batch. Each returns the scalar loss and the metrics to log as
// train/<name> (reduced with `ssm`; "loss" among them).
// PPO clip (CISPO for cispo; on the sequence-mean KL for gspo), OPSM, TIS (built-in or
// --custom-tis-function-path, under --use-tis or --get-mismatch-metrics; masks it narrows reduce
// every later term), the pg-loss reducer (--custom-pg-loss-reducer-function-path), the entropy
// bonus and --use-kl-loss. The old policy is batch.log_probs, else the forward's own log-probs
// (detached).
LossOutput policy_loss_function(const TrainContext& ctx, const LossBatch& batch,
                                const ForwardOutput& forward, SumOfSampleMean ssm);
// −mean(log-probs).
LossOutput sft_loss_function(const ForwardOutput& forward, const SumOfSampleMean& ssm);
// --custom-loss-function-path, given the batch as slime's dict (LossBatch::to_rollout_data).
LossOutput custom_loss_function(const TrainContext& ctx, const LossBatch& batch,
                                const ForwardOutput& forward, const SumOfSampleMean& ssm);
// The actor's loss: one of the three above by --loss-type.
LossOutput loss_function(const TrainContext& ctx, const LossBatch& batch,
                         const ForwardOutput& forward, const SumOfSampleMean& ssm);
// The critic's: value_loss of `values` against batch.returns, with batch.values as the old values;
// metrics value_loss and value_clipfrac.
LossOutput value_loss_function(double value_clip, const LossBatch& batch, const at::Tensor& values,
                               const SumOfSampleMean& ssm);

}  // namespace vime::train
