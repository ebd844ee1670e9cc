// The train data of one rollout: as the trainer receives it (TrainBatch, host vectors, one entry
// per sample) and as it works on it (RolloutTensors, slime's rollout_data: per-sample
// [response_length] fp32 tensors on the model's device, which the log-prob passes and the
// advantages fill in).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/train_hooks.hpp"

namespace vime::train {

struct TrainBatch {
  std::vector<std::vector<int64_t>> tokens;  // prompt + response
  std::vector<int64_t> response_lengths;
  std::vector<std::vector<float>> loss_masks;  // [response_length] each; empty: all ones
  // One per sample, post-processed: group-normalised as --advantage-estimator asks (the rollout's
  // reward post-process, rollout::post_process_rewards), used as they are.
  std::vector<double> rewards;
  std::vector<std::vector<float>> rollout_log_probs;  // optional, [response_length] each
  // Optional, [response_length] each: --use-opd's teacher log-probs that a rollout plugin put in
  // the samples (slime's on_policy_distillation.post_process_rewards).
  std::vector<std::vector<float>> teacher_log_probs;
  std::vector<int64_t> rollout_ids;  // optional: samples of one rollout id
  // Optional, [(tokens - 1) * num_layers * topk] each: the experts the rollout engine routed every
  // token to (--use-rollout-routing-replay; train/routing_replay.hpp).
  std::vector<std::vector<int32_t>> rollout_routed_experts;
  std::vector<at::Tensor> values;  // PPO: the critic's values, [response_length] on its device
  size_t size() const { return tokens.size(); }
};

struct RolloutTensors {
  std::vector<int64_t> total_lengths;  // prompt + response tokens
  std::vector<int64_t> response_lengths;
  std::vector<double> rewards;
  std::vector<double> mask_sums;          // Σ loss_mask of the sample
  std::vector<double> rollout_mask_sums;  // Σ loss_mask over the samples of its rollout id
  // [response_length] each; an empty vector: not computed / not in the train data.
  std::vector<at::Tensor> loss_masks, log_probs, ref_log_probs, rollout_log_probs, values,
      advantages, returns, teacher_log_probs;
  // --use-opd: student − teacher log-prob per token (slime's opd_reverse_kl), set with the
  // advantages.
  std::vector<at::Tensor> opd_reverse_kl;

  // Checks the batch (one entry per sample, 0 < response_length < tokens, mask and rollout
  // log-prob lengths) and moves it to `device`; log_probs, ref_log_probs, advantages and returns
  // stay empty.
  static RolloutTensors from(const TrainBatch& batch, const at::Device& device);
  size_t size() const { return total_lengths.size(); }

  // slime's rollout_data for the plugins that take it: "loss_masks", "rewards" and
  // "response_lengths" (scalars), and each of "log_probs", "ref_log_probs", "rollout_log_probs",
  // "values", "advantages", "returns" that holds a tensor per sample.
  RolloutData to_rollout_data() const;
};

}  // namespace vime::train
