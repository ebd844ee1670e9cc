// Built-in dynamic sampling filter: keep a group only when its rewards are not all the same
// (slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std).
//   --dynamic-sampling-filter-path check_reward_nonzero_std
#include <vime/hooks.hpp>

#include "common/reward_std.hpp"

namespace {

vime::DynamicFilterOutput check_reward_nonzero_std(const vime::Args& args,
                                                   const std::vector<vime::Sample>& group) {
  return vime::filters::check_reward_nonzero_std(args, group);
}

}  // namespace

VIME_DYNAMIC_FILTER_PLUGIN(check_reward_nonzero_std)
