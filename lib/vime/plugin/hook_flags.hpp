// Which flag loads which kind of plugin, and its default symbol. loop/hook_plugin_check
// checks every plugin a run names against this table before anything starts.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vime/args.hpp"
#include "vime/plugin.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::plugin {

struct HookFlag {
  std::string_view dest;  // "custom_rm_path"
  PluginKind kind;
  std::string_view default_symbol;  // used when the flag gives no ":symbol"
};

std::span<const HookFlag> hook_flags();
// The row of `dest` in hook_flags(); throws vime::Error for a dest that is not a hook flag.
const HookFlag& hook_flag(std::string_view dest);

// The plugin behind hook flag `dest` ("custom_loss_function_path") when the run sets it, loaded
// with the flag's name and default symbol; an empty function when it is unset.
template <PluginKind K>
PluginFunction<K> load_hook_if_set(const Args& args, std::string_view dest) {
  if (!args.is_set(dest)) return {};
  return load_plugin<K>(args.get_string(dest), args.flag_name(dest),
                        hook_flag(dest).default_symbol);
}
// The kind a hook flag needs in this run (--custom-rm-path needs a group_reward plugin under
// --group-rm).
PluginKind required_kind(const HookFlag& hook, const Args& args);

}  // namespace vime::plugin
