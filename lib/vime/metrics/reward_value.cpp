#include "vime/metrics/reward_value.hpp"

#include "vime/error.hpp"

namespace vime::metrics {

const Json& reward_json(const std::optional<std::string>& reward_key, const Sample& sample) {
  if (reward_key && sample.reward.is_object()) {
    const std::string& key = *reward_key;
    const Json* value = sample.reward.find(key);
    if (value == nullptr)
      throw Error("--reward-key " + key + ": the reward has no key '" + key +
                  "': " + sample.reward.dump());
    return *value;
  }
  return sample.reward;
}

const Json* numeric_reward(const std::optional<std::string>& reward_key, const Sample& sample) {
  if (sample.reward.is_null()) return nullptr;
  if (sample.reward.is_object()) {
    if (!reward_key) return nullptr;
    const Json* value = sample.reward.find(*reward_key);
    return value != nullptr && value->is_number() ? value : nullptr;
  }
  return sample.reward.is_number() || sample.reward.is_bool() ? &sample.reward : nullptr;
}

}  // namespace vime::metrics
