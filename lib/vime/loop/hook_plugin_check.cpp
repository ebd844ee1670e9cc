#include "vime/loop/hook_plugin_check.hpp"

#include <filesystem>

#include "vime/error.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/rollout/dynamic_filter.hpp"
#include "vime/rollout/fully_async_rollout.hpp"
#include "vime/rollout/sft_rollout.hpp"
#include "vime/train/builtin_tis.hpp"

namespace vime::loop {
namespace {

// slime passes Python import paths ("pkg.module.function"); say what vime expects instead.
void reject_python_path(const std::string& value, const std::string& flag) {
  plugin::PluginSpec spec = plugin::parse_plugin_spec(value);
  bool looks_like_file = spec.path.find('/') != std::string::npos || spec.path.ends_with(".so") ||
                         std::filesystem::exists(spec.path);
  if (!looks_like_file && spec.path.find('.') != std::string::npos) {
    throw UsageError(flag + ": '" + value +
                     "' is a Python function path; vime loads C++ plugins given as "
                     "path/to/lib.so[:symbol] (start one with `vime plugin new`)");
  }
}

}  // namespace

std::vector<std::string> check_hook_plugins(const Args& args) {
  std::vector<std::string> lines;
  for (const auto& hook : plugin::hook_flags()) {
    if (!args.has(hook.dest) || !args.is_set(hook.dest)) continue;
    const Json& value = args.get(hook.dest);
    std::vector<std::string> specs;
    if (value.is_array()) {
      for (const auto& v : value.as_array()) specs.push_back(v.as_string());
    } else {
      specs.push_back(value.as_string());
    }
    const std::string flag = args.flag_name(hook.dest);
    const PluginKind kind = plugin::required_kind(hook, args);
    const std::string default_symbol = kind == PluginKind::kGroupReward
                                           ? std::string("group_reward")
                                           : std::string(hook.default_symbol);
    for (auto s : specs) {
      // filter_hub's built-ins by name, slime's dotted name included.
      if (kind == PluginKind::kDynamicFilter) s = rollout::resolve_dynamic_filter_spec(s);
      // The built-in rollouts (default, rollout/sft_rollout) are no .so.
      if (kind == PluginKind::kRollout &&
          (rollout::is_sft_rollout_name(s) || rollout::is_fully_async_rollout_name(s) ||
           s == "slime.rollout.sglang_rollout.generate_rollout")) {
        lines.push_back(flag + ": " + s + " (built-in rollout)");
        continue;
      }
      // slime's TIS functions by their Python path, built in (train/builtin_tis.hpp).
      if (kind == PluginKind::kTis && train::is_builtin_tis_name(s)) {
        lines.push_back(flag + ": " + s + " (built-in tis)");
        continue;
      }
      reject_python_path(s, flag);
      plugin::LoadedExport e = plugin::load_export(s, flag, kind, default_symbol);
      lines.push_back(flag + ": " + e.description + " (" + plugin_kind_name(kind) + ")");
    }
  }
  return lines;
}

}  // namespace vime::loop
