#include "common/reward_std.hpp"

#include <cmath>
#include <vime/python_format.hpp>

namespace vime::filters {

DynamicFilterOutput check_reward_nonzero_std(const Args& args, const std::vector<Sample>& group) {
  std::vector<double> rewards;
  rewards.reserve(group.size());
  for (const Sample& sample : group) rewards.push_back(sample.get_reward_value(args));
  double std_unbiased = NAN;
  if (rewards.size() > 1) {
    double mean = 0;
    for (double r : rewards) mean += r;
    mean /= static_cast<double>(rewards.size());
    double squares = 0;
    for (double r : rewards) squares += (r - mean) * (r - mean);
    std_unbiased = std::sqrt(squares / static_cast<double>(rewards.size() - 1));
  }
  DynamicFilterOutput out;
  out.keep = std_unbiased > 1e-6;  // false for NaN
  if (!out.keep && !group.empty()) {
    // get_reward_value above has checked that reward[--reward-key] exists.
    const bool keyed = args.has("reward_key") && args.is_set("reward_key");
    const Json& first = keyed ? group[0].reward.at(args.get_string("reward_key")) : group[0].reward;
    out.reason = "zero_std_" + python_str_round(first, 1);
  }
  return out;
}

}  // namespace vime::filters
