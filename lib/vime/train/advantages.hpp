// Advantage estimators and returns (slime/utils/ppo_utils.py, backends/megatron_utils/
// loss.py): slime's compute_advantages_and_returns over a rollout, and its parts: GRPO/GSPO/CISPO,
// REINFORCE++ (and its baseline variant), PPO's GAE, advantage whitening. Per-sample tensors are
// [response_length] fp32. Rewards arrive group-normalised by the rollout (rollout/
// reward_post_process).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "vime/train/rollout_tensors.hpp"
#include "vime/train/train_context.hpp"

namespace vime::train {

// slime's compute_advantages_and_returns: data.advantages and data.returns for every sample, from
// data.rewards, the KL(old || ref) in the reward (ppo, reinforce++; old is data.log_probs, else
// data.ref_log_probs) and PPO's data.values; or, with --custom-advantage-function-path, whatever
// the plugin sets. Then --normalize-advantages whitens them.
void compute_advantages_and_returns(const TrainContext& ctx, RolloutTensors& data);

// G_t = Σ_k γ^k r_{t+k} over the last dim, as a chunked scan (chunks of `chunk` steps, each a
// small triangular matmul). rewards: [T] or [B, T].
at::Tensor discounted_returns(const at::Tensor& rewards, double gamma, int64_t chunk = 128);
// The same by a plain reverse loop (the reference the chunked scan is tested against).
at::Tensor discounted_returns_serial(const at::Tensor& rewards, double gamma);

struct AdvantagesAndReturns {
  at::Tensor advantages;  // [T]
  at::Tensor returns;     // [T]
};
// GAE with V_T = 0: δ_t = r_t + γV_{t+1} − V_t, A = Σ (γλ)^k δ_{t+k}, returns = A + V.
AdvantagesAndReturns gae(const at::Tensor& rewards, const at::Tensor& values, double gamma,
                         double lambda);
AdvantagesAndReturns gae_serial(const at::Tensor& rewards, const at::Tensor& values, double gamma,
                                double lambda);

// PPO: r_t = −kl_coef·kl_t, + reward at the last response position; then GAE.
AdvantagesAndReturns ppo_advantages(const at::Tensor& kl, const at::Tensor& values, double reward,
                                    double kl_coef, double gamma, double lambda);
// REINFORCE++: r_t = −kl_coef·kl_t·m_t, + reward at the last token with m = 1; A = returns = G.
AdvantagesAndReturns reinforce_plus_plus(const at::Tensor& kl, const at::Tensor& loss_mask,
                                         double reward, double kl_coef, double gamma);
// REINFORCE++-baseline: A_t = centred reward − kl_coef·kl_t; returns = A.
AdvantagesAndReturns reinforce_plus_plus_baseline(const at::Tensor& kl, double centred_reward,
                                                  double kl_coef);

// --normalize-advantages: whiten over every masked token of every sample (μ, unbiased var,
// eps 1e-8); all tokens are shifted and scaled.
std::vector<at::Tensor> whiten_advantages(const std::vector<at::Tensor>& advantages,
                                          const std::vector<at::Tensor>& loss_masks);

}  // namespace vime::train
