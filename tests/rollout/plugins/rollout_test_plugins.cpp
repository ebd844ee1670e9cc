// Plugins the [rollout] tests load through the real loader: a custom reward post-process and one
// that breaks its contract.
#include <vime/hooks.hpp>

namespace {

// Scores relative to the best sample of the batch.
vime::RewardPostProcessOutput relative_to_best(const vime::Args& args,
                                               const std::vector<vime::Sample>& samples) {
  vime::RewardPostProcessOutput out;
  double best = -1e300;
  for (const auto& s : samples) {
    out.raw_rewards.push_back(s.get_reward_value(args));
    best = std::max(best, out.raw_rewards.back());
  }
  for (double r : out.raw_rewards) out.rewards.push_back(r - best);
  return out;
}

vime::RewardPostProcessOutput too_few(const vime::Args&, const std::vector<vime::Sample>&) {
  return {{1.0}, {1.0}};
}

}  // namespace

VIME_REWARD_POST_PROCESS_PLUGIN(relative_to_best)
VIME_REWARD_POST_PROCESS_PLUGIN(too_few)
