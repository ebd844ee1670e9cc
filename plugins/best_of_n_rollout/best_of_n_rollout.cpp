// Best-of-n rollout (rejection sampling, RAFT-style): generate --n-samples-per-prompt responses per
// prompt with vime's default generate + reward, keep only the best-rewarded one of each prompt.
// Copy this file to start your own rollout function.
#include <algorithm>
#include <string>
#include <vime/hooks.hpp>

namespace {

vime::RolloutFnOutput best_of_n(vime::RolloutContext& ctx, int64_t rollout_id,
                                vime::DataSource& data_source, bool evaluation) {
  if (evaluation)
    throw vime::UsageError(
        "best_of_n_rollout is a train rollout; leave --eval-function-path unset or point it at "
        "another plugin");
  const int64_t num_prompts = ctx.args.get_int("rollout_batch_size");
  std::vector<vime::SampleGroup> groups =
      ctx.generate_groups(data_source.get_samples(num_prompts), ctx.sampling_params);

  vime::RolloutFnTrainOutput out;
  double kept_reward = 0;
  for (vime::SampleGroup& group : groups) {
    auto best = std::max_element(
        group.begin(), group.end(), [&](const vime::Sample& a, const vime::Sample& b) {
          return a.get_reward_value(ctx.args) < b.get_reward_value(ctx.args);
        });
    if (best == group.end()) continue;
    best->metadata["best_of"] = static_cast<int64_t>(group.size());
    best->metadata["best_of_rollout_id"] = rollout_id;
    kept_reward += best->get_reward_value(ctx.args);
    out.samples.push_back({std::move(*best)});
  }
  if (!out.samples.empty())
    out.metrics["rollout/best_of_n/kept_reward_mean"] =
        kept_reward / static_cast<double>(out.samples.size());
  return out;
}

}  // namespace

VIME_ROLLOUT_PLUGIN(best_of_n)
