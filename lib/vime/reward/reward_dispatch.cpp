#include "vime/reward/reward_dispatch.hpp"

#include <algorithm>
#include <filesystem>

#include "vime/error.hpp"
#include "vime/plugin/builtin_plugins.hpp"

namespace vime::reward {
namespace {

constexpr std::string_view kBoxedPrefix = "boxed_";

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

// slime: (metadata.get("rm_type") or args.rm_type or "").strip()
std::string rm_type_of(const RewardOptions& options, const Sample& sample) {
  if (sample.metadata.is_object()) {
    if (const Json* t = sample.metadata.find("rm_type");
        t && t->is_string() && !t->as_string().empty()) {
      return trim(t->as_string());
    }
  }
  return options.rm_type;
}

// math_utils.extract_answer: the content of the last \boxed{...}, or nothing.
std::string boxed_content(const std::string& text) {
  if (text.find("\\boxed") == std::string::npos) return "";
  size_t idx = text.rfind("\\boxed");
  int open = 0;
  for (size_t i = idx; i < text.size(); ++i) {
    if (text[i] == '{') ++open;
    if (text[i] == '}' && --open == 0) {
      std::string boxed = text.substr(idx, i + 1 - idx);
      if (!boxed.starts_with("\\boxed{")) return "";
      return boxed.substr(7, boxed.size() - 8);
    }
  }
  return "";
}

}  // namespace

const std::vector<std::string>& builtin_rm_types() {
  static const std::vector<std::string> types = {"math", "deepscaler",      "dapo",   "f1",
                                                 "gpqa", "gpqa_whole_word", "random", "remote_rm"};
  return types;
}

RewardDispatcher::RewardDispatcher(const Args& args)
    : args_(args), options_(RewardOptions::from(args)) {
  if (!options_.custom_rm_path) return;
  const std::string& spec = *options_.custom_rm_path;
  if (options_.group_rm) {
    group_fn_ =
        plugin::load_plugin<PluginKind::kGroupReward>(spec, "--custom-rm-path", "group_reward");
  } else {
    custom_fn_ = plugin::load_plugin<PluginKind::kReward>(spec, "--custom-rm-path", "reward");
  }
}

plugin::PluginFunction<PluginKind::kReward> RewardDispatcher::custom(const std::string& spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = "custom:" + spec;
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  auto fn = plugin::load_plugin<PluginKind::kReward>(spec, "the sample's custom_rm_path", "reward");
  loaded_[key] = fn;
  return fn;
}

plugin::PluginFunction<PluginKind::kReward> RewardDispatcher::builtin(const std::string& type) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = loaded_.find(type); it != loaded_.end()) return it->second;
  const auto& known = builtin_rm_types();
  if (std::find(known.begin(), known.end(), type) == known.end()) {
    std::string list;
    for (const auto& t : known) list += (list.empty() ? "" : ", ") + t;
    if (type == "ifbench") {
      throw UsageError(
          "--rm-type ifbench is not available in vime yet (it needs the IFBench "
          "instruction checkers); use --custom-rm-path with your own plugin");
    }
    throw UsageError(
        "reward model type '" + type + "' is not implemented (built-in: " + list +
        ", each optionally prefixed boxed_; or give --custom-rm-path lib.so[:symbol])");
  }
  auto path = plugin::builtin_plugin_path("rm_" + type);
  if (!std::filesystem::exists(path)) {
    throw Error("the built-in reward model '" + type + "' is missing: " + path.string() +
                " does not exist (build the rm_hub target, or point VIME_PLUGIN_DIR at the "
                "directory holding librm_" +
                type + ".so)");
  }
  auto fn = plugin::load_plugin<PluginKind::kReward>(path.string(), "--rm-type", "reward");
  loaded_[type] = fn;
  return fn;
}

Json RewardDispatcher::reward(const Sample& sample) {
  if (!sample.custom_rm_path.empty()) return custom(sample.custom_rm_path)(args_, sample);
  if (custom_fn_) return custom_fn_(args_, sample);
  if (group_fn_) {
    auto rewards = group_fn_(args_, std::vector<Sample>{sample});
    if (rewards.size() != 1) throw Error("--custom-rm-path group reward returned the wrong count");
    return rewards[0];
  }
  std::string type = rm_type_of(options_, sample);
  if (type.empty()) {
    throw UsageError(
        "no reward model: set --rm-type (math, dapo, ...), a sample's metadata "
        "rm_type, or --custom-rm-path");
  }
  if (type.starts_with(kBoxedPrefix)) {
    std::string inner = type.substr(kBoxedPrefix.size());
    if (inner == "remote_rm")
      return builtin(inner)(args_, sample);  // slime posts the original sample
    Sample boxed = sample;
    boxed.response = boxed_content(sample.response);
    return builtin(inner)(args_, boxed);
  }
  return builtin(type)(args_, sample);
}

std::vector<Json> RewardDispatcher::group_reward(const std::vector<Sample>& group) {
  if (group_fn_) {
    auto rewards = group_fn_(args_, group);
    if (rewards.size() != group.size()) {
      throw Error("--custom-rm-path " + group_fn_.description() + " returned " +
                  std::to_string(rewards.size()) + " rewards for a group of " +
                  std::to_string(group.size()) + " samples");
    }
    return rewards;
  }
  std::vector<Json> rewards;
  rewards.reserve(group.size());
  for (const auto& s : group) rewards.push_back(reward(s));
  return rewards;
}

}  // namespace vime::reward
