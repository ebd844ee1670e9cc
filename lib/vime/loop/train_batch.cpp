#include "vime/loop/train_batch.hpp"

#include <numeric>

namespace vime::loop {

ConvertedBatch to_train_batch(const TrainData& data) {
  ConvertedBatch out;
  auto& b = out.batch;
  const bool has_logprobs = !data.rollout_log_probs.empty();
  const bool has_teacher = !data.teacher_log_probs.empty();
  const bool has_routing = !data.rollout_routed_experts.empty();
  for (size_t i = 0; i < data.tokens.size(); ++i) {
    const int64_t response = data.response_lengths.at(i);
    if (response <= 0 || response >= static_cast<int64_t>(data.tokens[i].size())) {
      ++out.dropped_empty;
      continue;
    }
    b.tokens.emplace_back(data.tokens[i].begin(), data.tokens[i].end());
    b.response_lengths.push_back(response);
    b.rewards.push_back(data.rewards.at(i));
    if (i < data.loss_masks.size()) {
      b.loss_masks.emplace_back(data.loss_masks[i].begin(), data.loss_masks[i].end());
    } else {
      b.loss_masks.emplace_back();
    }
    if (has_logprobs) b.rollout_log_probs.push_back(data.rollout_log_probs.at(i));
    if (has_teacher) b.teacher_log_probs.push_back(data.teacher_log_probs.at(i));
    if (has_routing) b.rollout_routed_experts.push_back(data.rollout_routed_experts.at(i));
    b.rollout_ids.push_back(i < data.rollout_ids.size() ? data.rollout_ids[i]
                                                        : static_cast<int64_t>(i));
  }
  return out;
}

Metrics train_data_metrics(const TrainData& data) {
  Metrics m;
  const auto n = static_cast<double>(data.tokens.size());
  if (n == 0) return m;
  auto mean = [n](const auto& values) {
    double sum = 0;
    for (auto v : values) sum += static_cast<double>(v);
    return sum / n;
  };
  m["rollout/rewards"] = mean(data.rewards);
  m["rollout/raw_reward"] = mean(data.raw_reward);
  m["rollout/response_lengths"] = mean(data.response_lengths);
  m["rollout/truncated"] = mean(data.truncated);
  double total = 0;
  for (const auto& t : data.tokens) total += static_cast<double>(t.size());
  m["rollout/total_lengths"] = total / n;
  return m;
}

}  // namespace vime::loop
