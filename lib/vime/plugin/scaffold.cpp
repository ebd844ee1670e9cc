#include "vime/plugin/scaffold.hpp"

#include <fstream>
#include <regex>

#include "vime/error.hpp"

namespace vime::plugin {
namespace {

struct Template {
  const char* kind;
  const char* macro;
  const char* body;  // the function; NAME is replaced by the plugin name
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

  write_file(cmake, replace_all(R"(cmake_minimum_required(VERSION 3.25)
project(NAME LANGUAGES CXX)

# An installed vime: cmake -S . -B build -DCMAKE_PREFIX_PATH=<vime install prefix>
find_package(vime REQUIRED)
vime_add_plugin(NAME NAME.cpp)  # builds libNAME.so
)",
                                "NAME", name));
  const std::string code =
      std::string(R"(// A vime KIND plugin. Build: cmake -S . -B build && cmake --build build
#include <vime/hooks.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

)") + t->body +
      "\n" + t->macro + "(NAME)\n";
  write_file(source, replace_all(replace_all(code, "NAME", name), "KIND", kind));
  write_file(readme, replace_all(replace_all(R"(# NAME: a vime KIND plugin

    cmake -S . -B build -DCMAKE_PREFIX_PATH=<vime install prefix>
    cmake --build build
    vime plugin inspect build/libNAME.so

Use it with the flag of its kind, e.g. `vime train ... --custom-rm-path build/libNAME.so:NAME` for a reward.
)",
                                             "NAME", name),
                                 "KIND", kind));
  return {cmake, source, readme};
}

}  // namespace vime::plugin
