// Every flag the trainer reads, read once (TrainOptions::from): the advantage estimator and the
// loss type as enums, the policy loss's clip / KL / TIS settings, the micro-batching. The optimizer
// and the LR schedule read theirs in OptimizerConfig::from and LrScheduler::from. Plugins
// still receive the Args.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"
#include "vime/train/dp_schedule.hpp"

namespace vime::train {

enum class AdvantageEstimator {
  kGrpo,
  kGspo,
  kCispo,
  kReinforcePlusPlus,
  kReinforcePlusPlusBaseline,
  kPpo
};
// "grpo" | "gspo" | "cispo" | "reinforce_plus_plus" | "reinforce_plus_plus_baseline" | "ppo"
AdvantageEstimator parse_advantage_estimator(const std::string& name);

enum class LossType { kPolicyLoss, kSftLoss, kCustomLoss };
LossType parse_loss_type(const std::string& name);  // "policy_loss" | "sft_loss" | "custom_loss"

enum class KlType { kK1, kK2, kK3, kLowVarKl };
KlType parse_kl_type(const std::string& name);  // "k1" | "k2" | "k3" | "low_var_kl"

// compute_advantages_and_returns (slime/utils/ppo_utils.py, backends/megatron_utils/loss.py).
struct AdvantageOptions {
  AdvantageEstimator estimator = AdvantageEstimator::kGrpo;
  double kl_coef = 0;            // --kl-coef: KL(old || ref) in the reward (ppo, reinforce++)
  KlType kl_type = KlType::kK1;  // --kl-loss-type, also the reward's KL estimator
  double gamma = 1.0;
  double lambd = 1.0;
  bool normalize_advantages = false;
  // --use-opd: A −= opd_kl_coef·(student − teacher log-prob), after the estimator.
  bool use_opd = false;
  double opd_kl_coef = 1.0;

  // The reward carries -kl_coef·KL(old || ref) (slime: ppo and both reinforce++ estimators).
  bool has_kl_in_reward() const;
};

// policy_loss_function (slime/backends/megatron_utils/loss.py): policy-gradient, entropy, KL.
struct PolicyLossOptions {
  bool use_cispo = false;        // --advantage-estimator cispo: CISPO instead of PPO clip
  bool use_sequence_kl = false;  // --advantage-estimator gspo: clip on the sequence-mean KL
  double eps_clip = 0.2;
  double eps_clip_high = 0.2;  // --eps-clip-high, else --eps-clip
  std::optional<double> eps_clip_c;
  double entropy_coef = 0;
  bool use_opsm = false;
  double opsm_delta = 1e-4;
  bool use_tis = false;
  double tis_clip_low = 0;
  double tis_clip = 2.0;
  bool use_kl_loss = false;
  double kl_loss_coef = 0;
  KlType kl_loss_type = KlType::kK1;
  bool use_unbiased_kl = false;
};

// How a rollout is cut into optimizer steps and micro-batches.
struct BatchingOptions {
  std::optional<int64_t> global_batch_size;  // unset: the whole rollout is one step
  bool use_dynamic_batch_size = false;
  std::optional<int64_t> max_tokens_per_gpu;
  // The no-grad log-prob passes' micro-batches (--log-probs-max-tokens-per-gpu, which defaults to
  // --max-tokens-per-gpu); unset: --micro-batch-size samples.
  std::optional<int64_t> log_probs_max_tokens_per_gpu;
  int64_t micro_batch_size = 1;
  bool balance_data = false;  // --balance-data (implied by --balance-by-flops)
  // The linear term of a sample's FLOPs estimate per token, relative to the quadratic attention
  // term (6 x hidden size for a standard transformer); set from the model by the trainer.
  double flops_linear_coeff = 0;
  // --context-parallel-size: a micro-batch's tokens are shared by this many ranks, so the token
  // budgets above count a rank's share (slime's dp_schedule: max_tokens_per_gpu * cp_size per
  // micro-batch); set from the model by the trainer.
  int64_t context_parallel_size = 1;

  // A micro-batch's token budget for the training passes / the no-grad log-prob passes.
  std::optional<int64_t> micro_batch_tokens() const;
  std::optional<int64_t> log_probs_micro_batch_tokens() const;

  DpScheduleConfig schedule(int64_t num_samples, int64_t dp_size) const;
};

struct TrainOptions {
  LossType loss_type = LossType::kPolicyLoss;
  AdvantageOptions advantages;
  PolicyLossOptions policy_loss;
  BatchingOptions batching;
  double rollout_temperature = 1.0;  // the trainer divides logits by it too
  int64_t log_probs_chunk_rows = 2048;
  bool calculate_per_token_loss = false;
  bool use_rollout_logprobs = false;
  bool get_mismatch_metrics = false;
  bool compute_advantages_and_returns = true;  // not --disable-compute-advantages-and-returns
  bool ci_test = false;
  double value_clip = 0.2;  // the critic's value loss

  static TrainOptions from(const Args& args);
};

}  // namespace vime::train
