#include "vime/train/loss_batch.hpp"

#include <ATen/ATen.h>

namespace vime::train {
namespace {

// The samples `mb` of a per-sample quantity, concatenated; undefined when the rollout has none.
at::Tensor concat(const std::vector<at::Tensor>& per_sample, const MicroBatch& mb) {
  if (per_sample.empty()) return {};
  std::vector<at::Tensor> parts;
  parts.reserve(mb.size());
  for (auto s : mb) parts.push_back(per_sample[s]);
  return at::cat(parts);
}

std::vector<at::Tensor> split_by(const at::Tensor& flat, const std::vector<int64_t>& lengths) {
  std::vector<at::Tensor> out;
  out.reserve(lengths.size());
  int64_t start = 0;
  for (auto length : lengths) {
    out.push_back(flat.narrow(0, start, length));
    start += length;
  }
  return out;
}

}  // namespace

PackedBatch pack_samples(const TrainBatch& batch, const MicroBatch& mb, const at::Device& device) {
  std::vector<std::vector<int64_t>> sequences;
  sequences.reserve(mb.size());
  for (auto s : mb) sequences.push_back(batch.tokens[s]);
  return PackedBatch::pack(sequences, device);
}

LossBatch LossBatch::of(const TrainBatch& batch, const RolloutTensors& data, const MicroBatch& mb,
                        const at::Device& device) {
  LossBatch lb;
  lb.packed = pack_samples(batch, mb, device);
  for (auto s : mb) {
    lb.total_lengths.push_back(data.total_lengths[s]);
    lb.response_lengths.push_back(data.response_lengths[s]);
    if (!data.rollout_mask_sums.empty()) lb.rollout_mask_sums.push_back(data.rollout_mask_sums[s]);
  }
  lb.loss_masks = concat(data.loss_masks, mb);
  lb.log_probs = concat(data.log_probs, mb);
  lb.ref_log_probs = concat(data.ref_log_probs, mb);
  lb.rollout_log_probs = concat(data.rollout_log_probs, mb);
  lb.values = concat(data.values, mb);
  lb.advantages = concat(data.advantages, mb);
  lb.returns = concat(data.returns, mb);
  return lb;
}

std::vector<at::Tensor> LossBatch::split(const at::Tensor& flat) const {
  return split_by(flat, response_lengths);
}

RolloutData LossBatch::to_rollout_data() const {
  RolloutData rd;
  rd["tokens"] = split_by(packed.tokens, total_lengths);
  for (auto length : response_lengths) {
    rd["response_lengths"].push_back(at::scalar_tensor(length, at::kLong));
  }
  auto add_if_defined = [&](const char* key, const at::Tensor& flat) {
    if (flat.defined()) rd[key] = split(flat);
  };
  add_if_defined("loss_masks", loss_masks);
  add_if_defined("log_probs", log_probs);
  add_if_defined("ref_log_probs", ref_log_probs);
  add_if_defined("rollout_log_probs", rollout_log_probs);
  add_if_defined("values", values);
  add_if_defined("advantages", advantages);
  add_if_defined("returns", returns);
  return rd;
}

}  // namespace vime::train
