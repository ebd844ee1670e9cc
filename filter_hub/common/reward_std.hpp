// slime's built-in dynamic sampling filters (slime/rollout/filter_hub/dynamic_sampling_filters.py),
// shared by the plugins check_reward_nonzero_std and check_reward_nonzero_std_with_fallback: keep a
// group only when its rewards differ.
#pragma once

#include <vector>
#include <vime/hooks.hpp>

namespace vime::filters {

// keep = std(rewards, fp64, unbiased) > 1e-6 (a group of one has no std and is dropped, as
// torch's NaN std is); reason "zero_std_{round(r0, 1)}" spelled as Python prints it
// ("zero_std_1.0" for a float reward, "zero_std_1" for an integer one).
DynamicFilterOutput check_reward_nonzero_std(const Args& args, const std::vector<Sample>& group);

}  // namespace vime::filters
