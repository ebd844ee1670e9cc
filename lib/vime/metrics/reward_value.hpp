// A sample's reward as the JSON value slime's get_reward_value returns (reward[--reward-key] or
// the reward itself), keeping int versus float apart for metric names.
#pragma once

#include <optional>
#include <string>

#include "vime/json.hpp"
#include "vime/sample.hpp"

namespace vime::metrics {

// Throws vime::Error when --reward-key is set and missing from the reward (like get_reward_value).
const Json& reward_json(const std::optional<std::string>& reward_key, const Sample& sample);
// The numeric reward value, or nullptr when the reward is None or not a number (aborted samples,
// OPD's dict payloads): such samples are left out of reward statistics, as slime does.
const Json* numeric_reward(const std::optional<std::string>& reward_key, const Sample& sample);

}  // namespace vime::metrics
