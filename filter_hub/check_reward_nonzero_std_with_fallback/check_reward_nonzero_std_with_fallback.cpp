// Built-in dynamic sampling filter: check_reward_nonzero_std, but a zero-std group is kept when
// dropping it would leave too few groups to fill the batch (no extra sampling round).
//   --dynamic-sampling-filter-path check_reward_nonzero_std_with_fallback
#include <vime/hooks.hpp>

#include "common/reward_std.hpp"

namespace {

vime::DynamicFilterOutput check_reward_nonzero_std_with_fallback(
    const vime::Args& args, const std::vector<vime::Sample>& group) {
  vime::DynamicFilterOutput out = vime::filters::check_reward_nonzero_std(args, group);
  out.keep_when_insufficient = true;
  return out;
}

}  // namespace

VIME_DYNAMIC_FILTER_PLUGIN(check_reward_nonzero_std_with_fallback)
