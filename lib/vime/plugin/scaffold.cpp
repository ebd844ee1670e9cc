#include "vime/plugin/scaffold.hpp"

#include <fstream>
#include <regex>

#include "vime/error.hpp"

namespace vime::plugin {
namespace {

struct Template {
  const char* kind;
  const char* macro;
  const char* body;    // the function; NAME is replaced by the plugin name
  bool torch = false;  // a tensor hook: <vime/train_hooks.hpp> and LibTorch
};

constexpr Template kTemplates[] = {
    {"reward", "VIME_REWARD_PLUGIN",
     R"(// Reward model for --custom-rm-path: a number, or an object read through --reward-key.
vime::Json NAME(const vime::Args& args, const vime::Sample& sample) {
  (void)args;
  const std::string expected = sample.label.is_string() ? sample.label.as_string() : sample.label.dump();
  return sample.response.find(expected) != std::string::npos ? 1.0 : 0.0;
})"},
    {"group_reward", "VIME_GROUP_REWARD_PLUGIN",
     R"(// Group reward model for --custom-rm-path with --group-rm: one reward per sample of the group.
std::vector<vime::Json> NAME(const vime::Args& args, const std::vector<vime::Sample>& group) {
  (void)args;
  std::vector<vime::Json> rewards;
  size_t shortest = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i].response.size() < group[shortest].response.size()) shortest = i;
  }
  for (size_t i = 0; i < group.size(); ++i) rewards.emplace_back(i == shortest ? 1.0 : 0.0);
  return rewards;
})"},
    {"dynamic_filter", "VIME_DYNAMIC_FILTER_PLUGIN",
     R"(// Dynamic sampling filter for --dynamic-sampling-filter-path: keep groups whose rewards differ.
vime::DynamicFilterOutput NAME(const vime::Args& args, const std::vector<vime::Sample>& group) {
  bool all_equal = true;
  for (const auto& s : group) all_equal = all_equal && s.get_reward_value(args) == group[0].get_reward_value(args);
  if (all_equal) return {false, "all_equal", false};
  return {true, "", false};
})"},
    {"sample_hook", "VIME_SAMPLE_HOOK_PLUGIN",
     R"(// Sample hook for --rollout-sample-hook-path: runs after generation, before the reward model.
std::optional<vime::Sample> NAME(const vime::Args& args, vime::Sample sample, std::optional<int64_t> rollout_id,
                                 bool evaluation) {
  (void)args; (void)rollout_id; (void)evaluation;
  sample.metadata["response_chars"] = static_cast<int64_t>(sample.response.size());
  return sample;
})"},
    {"generate", "VIME_GENERATE_PLUGIN",
     R"(// Custom generate function for --custom-generate-function-path: one engine call per sample.
vime::Sample NAME(vime::GenerateContext& ctx, vime::Sample sample, const vime::SamplingParams& params) {
  vime::GenerateRequest request;
  request.input_ids = sample.tokens.empty() ? ctx.tokenizer.encode(sample.prompt.as_string()) : sample.tokens;
  request.sampling_params = params;
  request.session_id = sample.session_id;
  if (sample.tokens.empty()) sample.tokens = request.input_ids;
  vime::GenerateResponse out = ctx.engine.generate(request);
  sample.append_response_tokens(out.output_ids, out.output_log_probs, /*trainable=*/true,
                                ctx.tokenizer.decode(out.output_ids));
  sample.set_status_from_finish_reason(out.finish_reason);
  return sample;
})"},
    {"reward_post_process", "VIME_REWARD_POST_PROCESS_PLUGIN",
     R"(// Reward post-processing for --custom-reward-post-process-path: here, rewards centred on the batch mean.
vime::RewardPostProcessOutput NAME(const vime::Args& args, const std::vector<vime::Sample>& samples) {
  vime::RewardPostProcessOutput out;
  double mean = 0.0;
  for (const auto& s : samples) out.raw_rewards.push_back(s.get_reward_value(args));
  for (double r : out.raw_rewards) mean += r / static_cast<double>(out.raw_rewards.size());
  for (double r : out.raw_rewards) out.rewards.push_back(r - mean);
  return out;
})"},
    {"sample_filter", "VIME_SAMPLE_FILTER_PLUGIN",
     R"(// Sample filter for --rollout-sample-filter-path: drop truncated samples from the loss.
void NAME(const vime::Args& args, std::vector<vime::SampleGroup>& data) {
  (void)args;
  for (auto& group : data) {
    for (auto& s : group) s.remove_sample = s.remove_sample || s.status == vime::SampleStatus::kTruncated;
  }
})"},
    {"rollout_log", "VIME_ROLLOUT_LOG_PLUGIN",
     R"(// Rollout logger for --custom-rollout-log-function-path: return true to skip vime's own log.
bool NAME(int64_t rollout_id, const vime::Args& args, const std::vector<vime::Sample>& samples,
          const vime::Metrics& extra_metrics, double rollout_time_s) {
  (void)args; (void)extra_metrics;
  std::printf("rollout %lld: %zu samples in %.1f s\n", static_cast<long long>(rollout_id), samples.size(),
              rollout_time_s);
  return false;
})"},
    {"rollout", "VIME_ROLLOUT_PLUGIN",
     R"(// Rollout function for --rollout-function-path: one rollout's groups. Here vime's own generate +
// reward on --rollout-batch-size prompts, keeping the groups whose rewards are not all equal.
vime::RolloutFnOutput NAME(vime::RolloutContext& ctx, int64_t rollout_id, vime::DataSource& data_source,
                           bool evaluation) {
  (void)rollout_id;
  if (evaluation) throw vime::UsageError("NAME is a train rollout; leave --eval-function-path unset");
  auto groups = ctx.generate_groups(data_source.get_samples(ctx.args.get_int("rollout_batch_size")),
                                    ctx.sampling_params);
  vime::RolloutFnTrainOutput out;
  for (auto& group : groups) {
    bool differ = false;
    for (const auto& s : group) differ = differ || s.get_reward_value(ctx.args) != group[0].get_reward_value(ctx.args);
    if (differ || groups.size() == 1) out.samples.push_back(std::move(group));
  }
  if (out.samples.empty()) out.samples.push_back(std::move(groups[0]));
  out.metrics["rollout/NAME/kept_groups"] = static_cast<double>(out.samples.size());
  return out;
})"},
    {"buffer_filter", "VIME_BUFFER_FILTER_PLUGIN",
     R"(// Buffer filter for --buffer-filter-path: which buffered groups to take (newest first here); it
// must remove from `buffer` what it returns.
std::vector<vime::SampleGroup> NAME(const vime::Args& args, std::optional<int64_t> rollout_id,
                                   std::vector<vime::SampleGroup>& buffer, int64_t num_groups) {
  (void)args; (void)rollout_id;
  std::vector<vime::SampleGroup> taken;
  while (!buffer.empty() && static_cast<int64_t>(taken.size()) < num_groups) {
    taken.push_back(std::move(buffer.back()));
    buffer.pop_back();
  }
  return taken;
})"},
    {"all_samples_process", "VIME_ALL_SAMPLES_PROCESS_PLUGIN",
     R"(// All-samples process for --rollout-all-samples-process-path: sees every group, filtered ones too.
void NAME(const vime::Args& args, std::vector<vime::SampleGroup>& all_groups, vime::DataSource& data_source) {
  (void)args; (void)data_source;
  size_t samples = 0;
  for (const auto& group : all_groups) samples += group.size();
  std::printf("NAME: %zu groups, %zu samples\n", all_groups.size(), samples);
})"},
    {"convert_samples", "VIME_CONVERT_SAMPLES_PLUGIN",
     R"(// Samples -> train data for --custom-convert-samples-to-train-data-path (the default conversion,
// written out: raw rewards as rewards, every response token trained).
vime::TrainData NAME(const vime::Args& args, const std::vector<vime::Sample>& samples) {
  vime::TrainData data;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    data.tokens.push_back(s.tokens);
    data.response_lengths.push_back(s.response_length);
    data.rewards.push_back(s.get_reward_value(args));
    data.raw_reward.push_back(s.get_reward_value(args));
    data.truncated.push_back(s.status == vime::SampleStatus::kTruncated ? 1 : 0);
    data.sample_indices.push_back(s.index.value_or(static_cast<int64_t>(i)));
    data.rollout_ids.push_back(static_cast<int64_t>(i));
    data.loss_masks.push_back(s.loss_mask.value_or(std::vector<int32_t>(static_cast<size_t>(s.response_length), 1)));
    int64_t mask_sum = 0;
    for (int32_t m : data.loss_masks.back()) mask_sum += m;
    data.rollout_mask_sums.push_back(mask_sum);
  }
  return data;
})"},
    {"eval_rollout_log", "VIME_EVAL_ROLLOUT_LOG_PLUGIN",
     R"(// Eval logger for --custom-eval-rollout-log-function-path: return true to skip vime's own log.
bool NAME(int64_t rollout_id, const vime::Args& args, const vime::RolloutFnEvalOutput& data,
          const vime::Metrics& extra_metrics) {
  (void)args; (void)extra_metrics;
  for (const auto& [name, result] : data.data) {
    double sum = 0;
    for (double r : result.rewards) sum += r;
    std::printf("eval %lld %s: mean reward %.4f over %zu\n", static_cast<long long>(rollout_id), name.c_str(),
                result.rewards.empty() ? 0.0 : sum / static_cast<double>(result.rewards.size()),
                result.rewards.size());
  }
  return false;
})"},
    {"data_source", "VIME_DATA_SOURCE_PLUGIN",
     R"(// Data source for --data-source-path: endless "Count to N" prompts, N-th prompt labelled N.
namespace {
class CountingSource final : public vime::DataSource {
 public:
  explicit CountingSource(int64_t n_samples) : n_samples_(n_samples) {}
  std::vector<vime::SampleGroup> get_samples(int64_t num_groups) override {
    std::vector<vime::SampleGroup> groups;
    for (int64_t g = 0; g < num_groups; ++g, ++next_) {
      vime::SampleGroup group;
      for (int64_t i = 0; i < n_samples_; ++i) {
        vime::Sample s;
        s.prompt = "Count to " + std::to_string(next_) + ":";
        s.label = std::to_string(next_);
        s.group_index = next_;
        s.index = next_ * n_samples_ + i;
        group.push_back(std::move(s));
      }
      groups.push_back(std::move(group));
    }
    return groups;
  }
  void add_samples(std::vector<vime::SampleGroup> groups) override { (void)groups; }
  void save(int64_t rollout_id) override { (void)rollout_id; }
  void load(std::optional<int64_t> rollout_id) override { (void)rollout_id; }
  int64_t size() const override { return 1000; }

 private:
  int64_t n_samples_;
  int64_t next_ = 0;
};
}  // namespace

std::unique_ptr<vime::DataSource> NAME(const vime::Args& args) {
  return std::make_unique<CountingSource>(args.get_int("n_samples_per_prompt"));
})"},
    {"init_hook", "VIME_INIT_HOOK_PLUGIN",
     R"(// Init hook for --custom-megatron-init-path: once, after the trainer is set up.
void NAME(const vime::Args& args) {
  std::printf("NAME: training with lr %g\n", args.get_double("lr"));
})"},
    {"update_weight_post_write", "VIME_UPDATE_WEIGHT_POST_WRITE_PLUGIN",
     R"(// Hook for --custom-update-weight-post-write-path: after disk weights are written.
void NAME(const vime::Args& args, const std::string& version_dir, const std::vector<std::string>& engine_urls) {
  (void)args;
  std::printf("NAME: %s written for %zu engine(s)\n", version_dir.c_str(), engine_urls.size());
})"},
    {"rollout_data_postprocess", "VIME_ROLLOUT_DATA_POSTPROCESS_PLUGIN",
     R"(// Rollout-data postprocess for --rollout-data-postprocess-path: after log-probs and advantages,
// before the train steps. Here: clip every advantage to [-5, 5].
void NAME(const vime::Args& args, int64_t rollout_id, vime::RolloutData& rollout_data) {
  (void)args; (void)rollout_id;
  for (auto& advantages : rollout_data["advantages"]) advantages = advantages.clamp(-5.0, 5.0);
})",
     true},
    {"loss", "VIME_LOSS_PLUGIN",
     R"(// Loss for --custom-loss-function-path (--loss-type custom_loss): SFT's negative log-likelihood of
// the response tokens, from the packed micro-batch's logits [total_tokens, vocab].
vime::LossOutput NAME(const vime::Args& args, const vime::RolloutData& batch, const at::Tensor& logits,
                      const vime::SumOfSampleMean& sum_of_sample_mean) {
  (void)args;
  std::vector<at::Tensor> log_probs;
  int64_t start = 0;
  const auto& tokens = batch.at("tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int64_t total = tokens[i].numel();
    const int64_t response = batch.at("response_lengths")[i].item<int64_t>();
    auto rows = logits.narrow(0, start + total - response - 1, response).to(at::kFloat);
    auto targets = tokens[i].narrow(0, total - response, response).to(logits.device());
    log_probs.push_back(at::log_softmax(rows, -1).gather(1, targets.unsqueeze(1)).squeeze(1));
    start += total;
  }
  return {-sum_of_sample_mean(at::cat(log_probs)), {}};
})",
     true},
    {"advantage", "VIME_ADVANTAGE_PLUGIN",
     R"(// Advantages for --custom-advantage-function-path: REINFORCE, every token gets its sample's reward.
void NAME(const vime::Args& args, vime::RolloutData& rollout_data) {
  (void)args;
  const auto& rewards = rollout_data.at("rewards");
  const auto& masks = rollout_data.at("loss_masks");
  std::vector<at::Tensor> advantages;
  for (size_t i = 0; i < masks.size(); ++i) {
    advantages.push_back(at::ones_like(masks[i], at::kFloat) * rewards[i].to(at::kFloat));
  }
  rollout_data["advantages"] = advantages;
  rollout_data["returns"] = advantages;
})",
     true},
    {"tis", "VIME_TIS_PLUGIN",
     R"(// Truncated importance sampling for --custom-tis-function-path: weight pg_loss by
// min(exp(train - rollout log-prob), 2) per token.
vime::TisOutput NAME(const vime::Args& args, const vime::TisInputs& inputs) {
  (void)args;
  std::vector<at::Tensor> weights;
  for (size_t i = 0; i < inputs.train_log_probs.size(); ++i) {
    weights.push_back((inputs.train_log_probs[i] - inputs.rollout_log_probs[i]).exp().clamp_max(2.0));
  }
  auto w = at::cat(weights).detach();
  return {inputs.pg_loss * w, inputs.loss_masks, {{"NAME_weight", weights}}};
})",
     true},
    {"pg_loss_reducer", "VIME_PG_LOSS_REDUCER_PLUGIN",
     R"(// pg_loss reducer for --custom-pg-loss-reducer-function-path: Dr.GRPO's sum over tokens divided by
// a constant (here the longest response of the batch) instead of each sample's length.
vime::SumOfSampleMean NAME(const std::vector<int64_t>& total_lengths, const std::vector<int64_t>& response_lengths,
                           const std::vector<at::Tensor>& loss_masks, bool calculate_per_token_loss) {
  (void)total_lengths; (void)calculate_per_token_loss;
  int64_t longest = 1;
  for (int64_t n : response_lengths) longest = std::max(longest, n);
  at::Tensor mask = at::cat(loss_masks).to(at::kFloat);
  return [mask, longest](const at::Tensor& values) {
    return (values * mask.to(values.device())).sum() / static_cast<double>(longest);
  };
})",
     true},
    {"before_log_prob_hook", "VIME_BEFORE_LOG_PROB_HOOK_PLUGIN",
     R"(// Hook for --custom-megatron-before-log-prob-hook-path: before each log-prob pass; store_prefix is
// "" (actor), "ref_" or "teacher_".
void NAME(const vime::Args& args, vime::Model& model, std::string_view store_prefix) {
  (void)args; (void)model;
  std::printf("NAME: log-probs for '%.*s'\n", static_cast<int>(store_prefix.size()), store_prefix.data());
})",
     true},
    {"before_train_step_hook", "VIME_BEFORE_TRAIN_STEP_HOOK_PLUGIN",
     R"(// Hook for --custom-megatron-before-train-step-hook-path: before each optimizer step.
void NAME(const vime::Args& args, int64_t rollout_id, int64_t step_id, vime::Model& model,
          vime::Optimizer& optimizer, vime::LrScheduler& lr_scheduler) {
  (void)args; (void)model; (void)optimizer; (void)lr_scheduler;
  std::printf("NAME: rollout %lld step %lld\n", static_cast<long long>(rollout_id), static_cast<long long>(step_id));
})",
     true},
    {"model_provider", "VIME_MODEL_PROVIDER_PLUGIN",
     R"(// Model provider for --custom-model-provider-path. vime loads and checks it but does not call it
// yet; returning nullptr keeps vime's own model.
std::shared_ptr<vime::Model> NAME(const vime::Args& args, bool pre_process, bool post_process) {
  (void)args; (void)pre_process; (void)post_process;
  return nullptr;
})",
     true},
};

const Template* find_template(const std::string& kind) {
  for (const auto& t : kTemplates) {
    if (kind == t.kind) return &t;
  }
  return nullptr;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

std::vector<std::string> scaffold_kinds() {
  std::vector<std::string> out;
  for (const auto& t : kTemplates) out.emplace_back(t.kind);
  return out;
}

std::vector<std::filesystem::path> write_plugin_scaffold(const std::string& kind,
                                                         const std::string& name,
                                                         const std::filesystem::path& dir) {
  const Template* t = find_template(kind);
  if (t == nullptr) {
    std::string kinds;
    for (const auto& k : scaffold_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
    throw UsageError("--kind " + kind + ": `vime plugin new` writes one of: " + kinds);
  }
  static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, kIdentifier)) {
    throw UsageError("plugin name '" + name +
                     "' must be a C identifier (letters, digits, _), as it names the function");
  }
  const std::filesystem::path cmake = dir / "CMakeLists.txt";
  const std::filesystem::path source = dir / (name + ".cpp");
  const std::filesystem::path readme = dir / "README.md";
  for (const auto& p : {cmake, source, readme}) {
    if (std::filesystem::exists(p))
      throw UsageError(p.string() + " already exists; choose another --output");
  }
  std::filesystem::create_directories(dir);

  std::string cmake_text = R"(cmake_minimum_required(VERSION 3.25)
project(NAME LANGUAGES CXX)

# An installed vime: cmake -S . -B build -DCMAKE_PREFIX_PATH=<vime install prefix>
find_package(vime REQUIRED)
vime_add_plugin(NAME NAME.cpp)  # builds libNAME.so
)";
  if (t->torch) {
    // stdc++ first: PyTorch's wheel exports an old std::filesystem from libtorch_cpu.so.
    cmake_text += R"(# A tensor hook: LibTorch's headers and library.
find_package(Torch REQUIRED)
target_link_libraries(NAME PRIVATE stdc++ torch)
)";
  }
  write_file(cmake, replace_all(cmake_text, "NAME", name));
  const std::string code =
      std::string("// A vime KIND plugin. Build: cmake -S . -B build && cmake --build build\n") +
      (t->torch ? "#include <ATen/ATen.h>\n#include <vime/train_hooks.hpp>\n"
                : "#include <vime/hooks.hpp>\n") +
      R"(
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

)" + t->body +
      "\n" + t->macro + "(NAME)\n";
  write_file(source, replace_all(replace_all(code, "NAME", name), "KIND", kind));
  write_file(readme, replace_all(replace_all(R"(# NAME: a vime KIND plugin

    cmake -S . -B build -DCMAKE_PREFIX_PATH=<vime install prefix>
    cmake --build build
    vime plugin inspect build/libNAME.so

Use it with the flag of its kind (`vime plugin inspect` names the kind; the flags are in
`vime train --help`), e.g. `vime train ... --custom-rm-path build/libNAME.so:NAME` for a reward.
)",
                                             "NAME", name),
                                 "KIND", kind));
  return {cmake, source, readme};
}

}  // namespace vime::plugin
