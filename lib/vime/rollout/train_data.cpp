#include "vime/rollout/train_data.hpp"

#include <algorithm>
#include <map>

#include "vime/error.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::rollout {
namespace {

void check_size(size_t got, size_t expected, const char* column) {
  if (got != expected)
    throw Error(std::string("train data column ") + column + " has " + std::to_string(got) +
                " entries for " + std::to_string(expected) + " samples");
}

}  // namespace

void complete_train_data(TrainData& data, const std::vector<Sample>& samples) {
  const size_t n = samples.size();
  if (data.rollout_ids.empty()) {
    int64_t next = 0;
    for (const Sample& s : samples)
      if (s.rollout_id) next = std::max(next, *s.rollout_id + 1);
    for (const Sample& s : samples)
      data.rollout_ids.push_back(s.rollout_id ? *s.rollout_id : next++);
  }
  check_size(data.tokens.size(), n, "tokens");
  check_size(data.response_lengths.size(), n, "response_lengths");
  check_size(data.rewards.size(), n, "rewards");
  check_size(data.raw_reward.size(), n, "raw_reward");
  check_size(data.truncated.size(), n, "truncated");
  check_size(data.sample_indices.size(), n, "sample_indices");
  check_size(data.loss_masks.size(), n, "loss_masks");
  check_size(data.rollout_ids.size(), n, "rollout_ids");
  if (data.rollout_mask_sums.empty()) {
    std::map<int64_t, int64_t> sums;
    for (size_t i = 0; i < n; ++i)
      for (int32_t m : data.loss_masks[i]) sums[data.rollout_ids[i]] += m;
    for (size_t i = 0; i < n; ++i) data.rollout_mask_sums.push_back(sums[data.rollout_ids[i]]);
  }
  check_size(data.rollout_mask_sums.size(), n, "rollout_mask_sums");
}

TrainData convert_samples_to_train_data(const Args& args, const std::vector<Sample>& samples,
                                        const RewardPostProcessor& post_process) {
  (void)args;
  TrainData data;
  if (samples.empty()) return data;
  RewardPostProcessOutput rewards = post_process(samples);
  data.rewards = std::move(rewards.rewards);
  data.raw_reward = std::move(rewards.raw_rewards);
  const Sample& first = samples.front();
  const bool has_raw_reward = first.metadata.contains("raw_reward");
  const bool has_round_number = first.metadata.contains("round_number");
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    data.tokens.push_back(s.tokens);
    data.response_lengths.push_back(s.response_length);
    data.truncated.push_back(s.status == SampleStatus::kTruncated ? 1 : 0);
    data.sample_indices.push_back(s.index.value_or(-1));
    std::vector<int32_t> mask =
        s.loss_mask ? *s.loss_mask
                    : std::vector<int32_t>(static_cast<size_t>(s.response_length), 1);
    if (static_cast<int64_t>(mask.size()) != s.response_length)
      throw Error("sample " + std::to_string(s.index.value_or(-1)) + ": loss_mask has " +
                  std::to_string(mask.size()) + " entries for a response of " +
                  std::to_string(s.response_length) + " tokens");
    if (s.remove_sample) std::fill(mask.begin(), mask.end(), 0);
    data.loss_masks.push_back(std::move(mask));
    if (has_raw_reward) data.raw_reward[i] = s.metadata.at("raw_reward").as_double();
    if (has_round_number) data.round_number.push_back(s.metadata.at("round_number").as_int());
    if (first.rollout_log_probs)
      data.rollout_log_probs.push_back(s.rollout_log_probs.value_or(std::vector<float>{}));
    if (first.teacher_log_probs)
      data.teacher_log_probs.push_back(s.teacher_log_probs.value_or(std::vector<float>{}));
    if (!first.rollout_top_p_offsets.empty()) {
      data.rollout_top_p_token_ids.push_back(s.rollout_top_p_token_ids);
      data.rollout_top_p_offsets.push_back(s.rollout_top_p_offsets);
    }
    if (!first.rollout_routed_experts.empty())
      data.rollout_routed_experts.push_back(s.rollout_routed_experts);
    if (!first.train_metadata.is_null()) data.metadata.push_back(s.train_metadata);
    const Json* source = s.metadata.find("source_name");
    data.source_names.push_back(source && source->is_string() ? source->as_string() : "unknown");
  }
  complete_train_data(data, samples);
  return data;
}

TrainDataConverter load_train_data_converter(const Args& args, const RolloutOptions& options) {
  if (const auto& spec = options.convert_samples_to_train_data_path) {
    auto fn = plugin::load_plugin<PluginKind::kConvertSamples>(
        *spec, "--custom-convert-samples-to-train-data-path", "convert_samples_to_train_data");
    return [fn, args](const std::vector<Sample>& samples) {
      TrainData data = fn(args, samples);
      complete_train_data(data, samples);
      return data;
    };
  }
  auto post_process = load_reward_post_processor(args, options.reward_post_process);
  return [args, post_process](const std::vector<Sample>& samples) {
    return convert_samples_to_train_data(args, samples, post_process);
  };
}

}  // namespace vime::rollout
