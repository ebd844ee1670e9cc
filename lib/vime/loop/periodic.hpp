// When the loop saves and evaluates (slime's train.py::should_run_periodic_action).
#pragma once

#include <cstdint>
#include <optional>

namespace vime::loop {

// Never without an interval. Otherwise true after the last rollout (only when `num_rollout` is
// given: the save call passes it, the eval call does not), every `interval` rollouts, and at the
// end of every epoch when the epoch length is known.
bool should_run_periodic_action(int64_t rollout_id, std::optional<int64_t> interval,
                                std::optional<int64_t> num_rollout_per_epoch,
                                std::optional<int64_t> num_rollout = std::nullopt);

}  // namespace vime::loop
