// One micro-batch on its way to the loss, in one shape: the packed model input, and each
// response-token quantity of its samples concatenated in sample order ([Σ response_lengths] on the
// model's device), with the per-sample lengths that cut them apart. Built once per micro-batch.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/model/model.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/rollout_tensors.hpp"
#include "vime/train_hooks.hpp"

namespace vime::train {

struct LossBatch {
  PackedBatch packed;  // the samples' tokens, packed for the forward
  std::vector<int64_t> total_lengths;
  std::vector<int64_t> response_lengths;
  std::vector<double> rollout_mask_sums;
  at::Tensor loss_masks;
  // Undefined where the rollout has none (e.g. log_probs when the old policy is the current one).
  at::Tensor log_probs, ref_log_probs, rollout_log_probs, values, advantages, returns;

  // The samples `mb` of the rollout: tokens from `batch`, the rest from `data`.
  static LossBatch of(const TrainBatch& batch, const RolloutTensors& data, const MicroBatch& mb,
                      const at::Device& device);

  // Per-sample views [response_length] of a [Σ response_lengths] tensor.
  std::vector<at::Tensor> split(const at::Tensor& flat) const;
  // slime's batch for a custom loss: "tokens" (each sample's prompt + response) and the
  // per-sample views of every defined quantity above.
  RolloutData to_rollout_data() const;
};

// The tokens of samples `mb` of `batch`, packed for a forward on `device`.
PackedBatch pack_samples(const TrainBatch& batch, const MicroBatch& mb, const at::Device& device);

}  // namespace vime::train
