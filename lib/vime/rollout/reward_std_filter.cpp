#include "vime/rollout/reward_std_filter.hpp"

#include <cmath>

#include "vime/metrics/python_format.hpp"
#include "vime/metrics/reward_value.hpp"
#include "vime/reward/reward_options.hpp"

namespace vime::rollout {

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
  if (!out.keep && !group.empty())
    out.reason =
        "zero_std_" +
        metrics::python_str_round(
            metrics::reward_json(reward::RewardOptions::from(args).reward_key, group[0]), 1);
  return out;
}

DynamicFilterOutput check_reward_nonzero_std_with_fallback(const Args& args,
                                                           const std::vector<Sample>& group) {
  DynamicFilterOutput out = check_reward_nonzero_std(args, group);
  out.keep_when_insufficient = true;
  return out;
}

}  // namespace vime::rollout
