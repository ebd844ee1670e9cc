// slime's built-in dynamic sampling filters (filter_hub/dynamic_sampling_filters.py), shipped as
// the plugins filter_hub/check_reward_nonzero_std*: keep a group only when its rewards differ.
#pragma once

#include <vector>

#include "vime/args.hpp"
#include "vime/rollout_types.hpp"
#include "vime/sample.hpp"

namespace vime::rollout {

// keep = std(rewards, fp64, unbiased) > 1e-6 (a group of one has no std and is dropped, as
// torch's NaN std is); reason "zero_std_{round(r0, 1)}" spelled as Python prints it
// ("zero_std_1.0" for a float reward, "zero_std_1" for an integer one).
DynamicFilterOutput check_reward_nonzero_std(const Args& args, const std::vector<Sample>& group);
// The same with keep_when_insufficient, so too few groups never trigger another sampling round.
DynamicFilterOutput check_reward_nonzero_std_with_fallback(const Args& args,
                                                           const std::vector<Sample>& group);

}  // namespace vime::rollout
