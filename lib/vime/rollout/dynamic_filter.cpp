#include "vime/rollout/dynamic_filter.hpp"

#include "vime/hooks.hpp"
#include "vime/metrics/metric_names.hpp"
#include "vime/plugin/builtin_plugins.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::rollout {

bool should_drop_group(const DynamicFilterOutput& output, int64_t remaining_batch_size,
                       int64_t target_batch_size) {
  if (output.keep) return false;
  if (output.keep_when_insufficient && remaining_batch_size <= target_batch_size) return false;
  return true;
}

void DynamicFilterMetrics::on_drop(std::string_view reason) {
  if (reason.empty()) return;
  auto it = drops_by_reason_.find(reason);
  if (it == drops_by_reason_.end()) it = drops_by_reason_.emplace(std::string(reason), 0).first;
  ++it->second;
}

Metrics DynamicFilterMetrics::metrics() const {
  Metrics out;
  for (const auto& [reason, count] : drops_by_reason_)
    out[metrics::names::kDynamicFilterDropPrefix + reason] = static_cast<double>(count);
  return out;
}

std::string resolve_dynamic_filter_spec(std::string_view text) {
  constexpr std::string_view kSlimeModule = "slime.rollout.filter_hub.dynamic_sampling_filters.";
  std::string_view name = text;
  if (name.substr(0, kSlimeModule.size()) == kSlimeModule) name.remove_prefix(kSlimeModule.size());
  for (std::string_view builtin :
       {"check_reward_nonzero_std", "check_reward_nonzero_std_with_fallback"}) {
    if (name == builtin)
      return plugin::builtin_plugin_path("filter_" + std::string(builtin)).string() + ":" +
             std::string(builtin);
  }
  return std::string(text);
}

DynamicFilter load_dynamic_filter(const Args& args, const RolloutOptions& options) {
  const auto& spec = options.dynamic_sampling_filter_path;
  if (!spec) return {};
  auto fn = plugin::load_plugin<PluginKind::kDynamicFilter>(
      resolve_dynamic_filter_spec(*spec), "--dynamic-sampling-filter-path", "dynamic_filter");
  return [fn, args](const std::vector<Sample>& group) { return fn(args, group); };
}

}  // namespace vime::rollout
