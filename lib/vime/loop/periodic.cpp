#include "vime/loop/periodic.hpp"

namespace vime::loop {

bool should_run_periodic_action(int64_t rollout_id, std::optional<int64_t> interval,
                                std::optional<int64_t> num_rollout_per_epoch,
                                std::optional<int64_t> num_rollout) {
  if (!interval.has_value()) return false;
  if (num_rollout.has_value() && rollout_id == *num_rollout - 1) return true;
  const int64_t next = rollout_id + 1;
  if (*interval > 0 && next % *interval == 0) return true;
  return num_rollout_per_epoch.has_value() && *num_rollout_per_epoch > 0 &&
         next % *num_rollout_per_epoch == 0;
}

}  // namespace vime::loop
