// Plugins the [rollout_manager] tests load through the real loader, one per hook the manager
// calls.
#include <string>
#include <vime/hooks.hpp>

namespace {

bool prompt_has(const vime::Sample& s, const char* marker) {
  return s.prompt.is_string() && s.prompt.as_string().find(marker) != std::string::npos;
}

// Generate through the engine like the default one; PLUGIN_THROW throws, SELF_REWARD sets reward.
vime::Sample scripted_generate(vime::GenerateContext& ctx, vime::Sample sample,
                               const vime::SamplingParams& params) {
  if (prompt_has(sample, "PLUGIN_THROW")) throw vime::Error("generate plugin failed on purpose");
  vime::GenerateRequest request;
  request.input_ids = ctx.tokenizer.encode(sample.prompt.as_string());
  request.sampling_params = params;
  vime::GenerateResponse response = ctx.engine.generate(request);
  sample.tokens = request.input_ids;
  sample.append_response_tokens(response.output_ids, response.output_log_probs, true,
                                ctx.tokenizer.decode(response.output_ids));
  sample.set_status_from_finish_reason(response.finish_reason);
  sample.metadata["generated_by"] = "scripted_generate";
  if (prompt_has(sample, "SELF_REWARD")) sample.reward = 0.5;
  return sample;
}

std::optional<vime::Sample> tag_hook(const vime::Args&, vime::Sample sample,
                                     std::optional<int64_t> rollout_id, bool evaluation) {
  sample.metadata["hook_rollout_id"] = rollout_id.value_or(-1);
  sample.metadata["hook_evaluation"] = evaluation;
  sample.metadata["hook_saw_reward"] = !sample.reward.is_null();
  return sample;
}

std::optional<vime::Sample> second_hook(const vime::Args&, vime::Sample sample,
                                        std::optional<int64_t>, bool) {
  if (!sample.metadata.contains("hook_rollout_id")) throw vime::Error("hooks ran out of order");
  sample.metadata["second_hook"] = true;
  return std::nullopt;
}

void drop_odd(const vime::Args&, std::vector<vime::SampleGroup>& data) {
  for (auto& group : data)
    for (auto& s : group)
      if (s.index.value_or(0) % 2 == 1) s.remove_sample = true;
}

void count_all(const vime::Args&, std::vector<vime::SampleGroup>& all_groups, vime::DataSource&) {
  for (auto& group : all_groups)
    for (auto& s : group) s.metadata["all_groups_seen"] = static_cast<int64_t>(all_groups.size());
}

vime::TrainData sevens(const vime::Args&, const std::vector<vime::Sample>& samples) {
  vime::TrainData data;
  for (const auto& s : samples) {
    data.tokens.push_back(s.tokens);
    data.response_lengths.push_back(s.response_length);
    data.rewards.push_back(7);
    data.raw_reward.push_back(7);
    data.truncated.push_back(0);
    data.sample_indices.push_back(s.index.value_or(-1));
    data.loss_masks.push_back(std::vector<int32_t>(static_cast<size_t>(s.response_length), 1));
  }
  return data;
}

bool skip_log(int64_t, const vime::Args&, const std::vector<vime::Sample>&, const vime::Metrics&,
              double) {
  return true;
}
bool skip_eval_log(int64_t, const vime::Args&, const vime::RolloutFnEvalOutput&,
                   const vime::Metrics&) {
  return true;
}

// Group reward: each sample's place in its group.
std::vector<vime::Json> group_rank(const vime::Args&, const std::vector<vime::Sample>& group) {
  std::vector<vime::Json> out;
  for (size_t i = 0; i < group.size(); ++i) out.emplace_back(static_cast<int64_t>(i));
  return out;
}

// Reward: 100 + the response length (to tell it from rm_hub's 0/1).
vime::Json length_reward(const vime::Args&, const vime::Sample& sample) {
  return vime::Json(100 + sample.response_length);
}

}  // namespace

VIME_GENERATE_PLUGIN(scripted_generate)
VIME_SAMPLE_HOOK_PLUGIN(tag_hook)
VIME_SAMPLE_HOOK_PLUGIN(second_hook)
VIME_SAMPLE_FILTER_PLUGIN(drop_odd)
VIME_ALL_SAMPLES_PROCESS_PLUGIN(count_all)
VIME_CONVERT_SAMPLES_PLUGIN(sevens)
VIME_ROLLOUT_LOG_PLUGIN(skip_log)
VIME_EVAL_ROLLOUT_LOG_PLUGIN(skip_eval_log)
VIME_GROUP_REWARD_PLUGIN(group_rank)
VIME_REWARD_PLUGIN(length_reward)
