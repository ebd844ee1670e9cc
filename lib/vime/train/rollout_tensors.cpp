#include "vime/train/rollout_tensors.hpp"

#include <ATen/ATen.h>

#include <map>
#include <string>

#include "vime/error.hpp"

namespace vime::train {
namespace {

at::Tensor to_tensor(const std::vector<float>& v, const at::Device& device) {
  return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).to(device);
}

std::string sample_name(size_t i) { return "train data: sample " + std::to_string(i); }

at::Tensor loss_mask_of(const TrainBatch& batch, size_t i, const at::Device& device) {
  const int64_t response = batch.response_lengths[i];
  if (i >= batch.loss_masks.size() || batch.loss_masks[i].empty()) {
    return at::ones({response}, at::TensorOptions().dtype(at::kFloat).device(device));
  }
  if (static_cast<int64_t>(batch.loss_masks[i].size()) != response) {
    throw Error(sample_name(i) + " has a loss_mask of " +
                std::to_string(batch.loss_masks[i].size()) + " entries for response_length " +
                std::to_string(response));
  }
  return to_tensor(batch.loss_masks[i], device);
}

}  // namespace

RolloutTensors RolloutTensors::from(const TrainBatch& batch, const at::Device& device) {
  const size_t n = batch.size();
  if (batch.response_lengths.size() != n || (!batch.rewards.empty() && batch.rewards.size() != n)) {
    throw Error("train data: tokens, response_lengths and rewards need one entry per sample");
  }
  RolloutTensors data;
  data.response_lengths = batch.response_lengths;
  data.rewards = batch.rewards;
  auto rollout_of = [&](size_t i) {
    return batch.rollout_ids.empty() ? static_cast<int64_t>(i) : batch.rollout_ids[i];
  };
  std::vector<at::Tensor> mask_sums;
  for (size_t i = 0; i < n; ++i) {
    const auto total = static_cast<int64_t>(batch.tokens[i].size());
    const int64_t response = batch.response_lengths[i];
    if (response <= 0 || response >= total) {
      throw Error(sample_name(i) + " has response_length " + std::to_string(response) + " of " +
                  std::to_string(total) + " tokens");
    }
    data.total_lengths.push_back(total);
    data.loss_masks.push_back(loss_mask_of(batch, i, device));
    mask_sums.push_back(data.loss_masks.back().sum());
  }
  // One host copy for every sample's mask sum.
  std::map<int64_t, double> mask_sum_by_rollout;
  if (n > 0) {
    const auto host = at::stack(mask_sums).to(at::kCPU).to(at::kDouble).contiguous();
    for (size_t i = 0; i < n; ++i) {
      data.mask_sums.push_back(host.data_ptr<double>()[i]);
      mask_sum_by_rollout[rollout_of(i)] += data.mask_sums.back();
    }
  }
  for (size_t i = 0; i < n; ++i)
    data.rollout_mask_sums.push_back(mask_sum_by_rollout[rollout_of(i)]);
  if (!batch.rollout_log_probs.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<int64_t>(batch.rollout_log_probs[i].size()) != batch.response_lengths[i]) {
        throw Error(sample_name(i) + " has rollout_log_probs of the wrong length");
      }
      data.rollout_log_probs.push_back(to_tensor(batch.rollout_log_probs[i], device));
    }
  }
  for (size_t i = 0; i < batch.teacher_log_probs.size() && i < n; ++i) {
    if (static_cast<int64_t>(batch.teacher_log_probs[i].size()) != batch.response_lengths[i]) {
      throw Error(sample_name(i) + " has teacher_log_probs of " +
                  std::to_string(batch.teacher_log_probs[i].size()) +
                  " entries for response_length " + std::to_string(batch.response_lengths[i]));
    }
    data.teacher_log_probs.push_back(to_tensor(batch.teacher_log_probs[i], device));
  }
  for (const auto& v : batch.values) data.values.push_back(v.to(device));
  return data;
}

RolloutData RolloutTensors::to_rollout_data() const {
  RolloutData rd;
  rd["loss_masks"] = loss_masks;
  for (size_t i = 0; i < size(); ++i) {
    if (i < rewards.size()) rd["rewards"].push_back(at::scalar_tensor(rewards[i]));
    rd["response_lengths"].push_back(at::scalar_tensor(response_lengths[i], at::kLong));
  }
  auto add_if_present = [&](const char* key, const std::vector<at::Tensor>& per_sample) {
    if (!per_sample.empty()) rd[key] = per_sample;
  };
  add_if_present("log_probs", log_probs);
  add_if_present("ref_log_probs", ref_log_probs);
  add_if_present("rollout_log_probs", rollout_log_probs);
  add_if_present("values", values);
  add_if_present("advantages", advantages);
  add_if_present("returns", returns);
  add_if_present("teacher_log_probs", teacher_log_probs);
  add_if_present("opd_reverse_kl", opd_reverse_kl);
  return rd;
}

}  // namespace vime::train
