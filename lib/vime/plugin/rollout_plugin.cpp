#include "vime/plugin/rollout_plugin.hpp"

#include "vime/error.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::plugin {
namespace {

constexpr const char* kFlag = "--rollout-plugin";

bool exports_kind(const PluginInfo& info, PluginKind kind, const std::string& symbol) {
  for (const auto& e : info.exports) {
    if (e.kind == kind && (symbol.empty() || e.name == symbol)) return true;
  }
  return false;
}

std::string exports_text(const PluginInfo& info) {
  std::string text;
  for (const auto& e : info.exports) {
    text += (text.empty() ? "" : ", ") + e.name + " (" + plugin_kind_name(e.kind) + ")";
  }
  return text.empty() ? "nothing" : text;
}

void set_derived(Args& args, const char* dest, const std::string& value) {
  if (args.is_set(dest)) {
    throw UsageError(std::string(kFlag) + " " + value + " sets " + args.flag_name(dest) +
                     ", which the run also gives (" + args.get_string(dest) +
                     "); pass only one of them");
  }
  args.set(dest, Json(value), ArgSource::kDerived, args.flag_name(dest));
}

}  // namespace

std::vector<std::string> resolve_rollout_plugin(Args& args) {
  if (!args.is_set("rollout_plugin")) return {};
  const std::string value = args.get_string("rollout_plugin");
  const PluginSpec spec = parse_plugin_spec(value);
  const PluginInfo info = inspect_plugin(spec.path, kFlag);
  const bool rollout = exports_kind(info, PluginKind::kRollout, spec.symbol);
  const bool generate = exports_kind(info, PluginKind::kGenerate, spec.symbol);
  if (!rollout && !generate) {
    throw UsageError(std::string(kFlag) + " " + value +
                     ": exports no rollout or generate function (it exports " + exports_text(info) +
                     ")");
  }
  if (rollout && generate) {
    throw UsageError(std::string(kFlag) + " " + value +
                     ": exports both a rollout and a generate function; name one as " + spec.path +
                     ":SYMBOL, or use --rollout-function-path / "
                     "--custom-generate-function-path");
  }
  std::vector<std::string> set;
  const char* dest = rollout ? "rollout_function_path" : "custom_generate_function_path";
  set_derived(args, dest, value);
  set.push_back(args.flag_name(dest) + " " + value);

  const HookFlag& rm = hook_flag("custom_rm_path");
  const bool names_reward = args.is_set("custom_rm_path") || args.is_set("rm_type");
  if (!names_reward && exports_kind(info, required_kind(rm, args), "")) {
    set_derived(args, "custom_rm_path", spec.path);
    set.push_back(args.flag_name("custom_rm_path") + " " + spec.path);
  }
  return set;
}

}  // namespace vime::plugin
