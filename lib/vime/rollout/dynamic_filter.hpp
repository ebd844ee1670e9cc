// What the rollout loop does with a dynamic filter's verdict on a finished group (slime's
// filter_hub/base_types.py), and the drop-reason counters it logs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "vime/args.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/rollout_types.hpp"

namespace vime::rollout {

// True when the group is dropped: not `keep`, unless `keep_when_insufficient` and dropping it would
// leave no more than the target number of groups in flight or kept (remaining <= target).
bool should_drop_group(const DynamicFilterOutput& output, int64_t remaining_batch_size,
                       int64_t target_batch_size);

// Counts drops by reason; metrics() gives rollout/dynamic_filter/drop_{reason}. Drops without a
// reason are not counted, as in slime.
class DynamicFilterMetrics {
 public:
  void on_drop(std::string_view reason);
  Metrics metrics() const;

 private:
  std::map<std::string, int64_t, std::less<>> drops_by_reason_;
};

// The plugin spec behind --dynamic-sampling-filter-path: filter_hub's built-ins by bare name
// ("check_reward_nonzero_std") or by slime's dotted name
// ("slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std") become the
// built-in .so; anything else is taken as path/to/lib.so[:symbol].
std::string resolve_dynamic_filter_spec(std::string_view text);

using DynamicFilter = std::function<DynamicFilterOutput(const std::vector<Sample>& group)>;
// The filter of --dynamic-sampling-filter-path bound to `args`; empty when the flag is unset.
// Throws UsageError (naming the flag) when the plugin cannot be loaded.
DynamicFilter load_dynamic_filter(const Args& args, const RolloutOptions& options);

}  // namespace vime::rollout
