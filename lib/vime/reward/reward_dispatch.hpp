// Which reward model grades a sample, in slime's order (rm_hub/__init__.py: async_rm,
// batched_async_rm):
//   1. the sample's own custom_rm_path (eval datasets set it),
//   2. --custom-rm-path (with --group-rm: a group_reward plugin called once per group),
//   3. metadata["rm_type"], else --rm-type: a built-in model from rm_hub, loaded as the plugin
//      <libdir>/vime/librm_<type>.so. A "boxed_" prefix first replaces the response with its
//      \boxed{} content ("" when there is none) and then dispatches on the rest of the name.
// Plugins are loaded once and shared; reward() may be called from many threads at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/hooks.hpp"
#include "vime/json.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/reward/reward_options.hpp"
#include "vime/sample.hpp"

namespace vime::reward {

// The built-in reward models (rm_hub/<name>/).
const std::vector<std::string>& builtin_rm_types();

class RewardDispatcher {
 public:
  // Loads --custom-rm-path now, so a bad plugin fails before any sample is graded.
  explicit RewardDispatcher(const Args& args);

  // The raw reward of one sample: a number, or the object the model returns (dapo, remote_rm).
  Json reward(const Sample& sample);
  // One reward per sample; under --group-rm with --custom-rm-path, one call for the whole group.
  std::vector<Json> group_reward(const std::vector<Sample>& group);

  bool uses_group_rm() const { return static_cast<bool>(group_fn_); }

 private:
  plugin::PluginFunction<PluginKind::kReward> builtin(const std::string& type);
  plugin::PluginFunction<PluginKind::kReward> custom(const std::string& spec);

  const Args args_;  // a copy for the plugins: the dispatcher may outlive the caller's Args
  const RewardOptions options_;
  plugin::PluginFunction<PluginKind::kReward> custom_fn_;
  plugin::PluginFunction<PluginKind::kGroupReward> group_fn_;
  std::mutex mutex_;
  std::map<std::string, plugin::PluginFunction<PluginKind::kReward>> loaded_;
};

}  // namespace vime::reward
