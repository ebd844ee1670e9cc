#include "vime/rollout/reward_post_process.hpp"

#include <cmath>

#include "vime/plugin/plugin_loader.hpp"

namespace vime::rollout {
namespace {

constexpr double kStdEpsilon = 1e-6;

bool estimator_is_one_of(const std::string& estimator, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (estimator == name) return true;
  return false;
}

}  // namespace

std::vector<double> normalize_group_rewards(const std::vector<double>& rewards, size_t group_size,
                                            bool divide_by_std) {
  if (group_size == 0 || rewards.size() % group_size != 0) group_size = rewards.size();
  std::vector<double> out(rewards.size());
  for (size_t start = 0; start < rewards.size(); start += group_size) {
    double mean = 0;
    for (size_t i = start; i < start + group_size; ++i) mean += rewards[i];
    mean /= static_cast<double>(group_size);
    double squares = 0;
    for (size_t i = start; i < start + group_size; ++i) {
      out[i] = rewards[i] - mean;
      squares += out[i] * out[i];
    }
    if (!divide_by_std) continue;
    if (group_size < 2) {
      out[start] = 0.0;
      continue;
    }
    const double std_unbiased = std::sqrt(squares / static_cast<double>(group_size - 1));
    for (size_t i = start; i < start + group_size; ++i) out[i] /= std_unbiased + kStdEpsilon;
  }
  return out;
}

RewardPostProcessOutput post_process_rewards(const Args& args, const std::vector<Sample>& samples) {
  RewardPostProcessOutput out;
  out.raw_rewards.reserve(samples.size());
  for (const Sample& sample : samples) out.raw_rewards.push_back(sample.get_reward_value(args));

  const std::string estimator = args.get_string("advantage_estimator");
  const bool normalize =
      args.get_bool("rewards_normalization") &&
      estimator_is_one_of(estimator, {"grpo", "gspo", "cispo", "reinforce_plus_plus_baseline"});
  if (!normalize) {
    out.rewards = out.raw_rewards;
    return out;
  }
  const bool divide_by_std = estimator_is_one_of(estimator, {"grpo", "gspo", "cispo"}) &&
                             args.get_bool("grpo_std_normalization");
  const auto n = static_cast<size_t>(args.get_int("n_samples_per_prompt"));
  const auto rollout_batch_size = args.get_optional_int("rollout_batch_size");
  const bool full_batch =
      rollout_batch_size && samples.size() == n * static_cast<size_t>(*rollout_batch_size);
  out.rewards = normalize_group_rewards(out.raw_rewards, full_batch ? n : 0, divide_by_std);
  return out;
}

RewardPostProcessor load_reward_post_processor(const Args& args) {
  if (auto spec = args.get_optional_string("custom_reward_post_process_path")) {
    auto fn = plugin::load_plugin<PluginKind::kRewardPostProcess>(
        *spec, "--custom-reward-post-process-path", "reward_post_process");
    return [fn, args](const std::vector<Sample>& samples) {
      RewardPostProcessOutput out = fn(args, samples);
      if (out.raw_rewards.size() != samples.size() || out.rewards.size() != samples.size())
        throw Error("--custom-reward-post-process-path " + fn.description() + " returned " +
                    std::to_string(out.raw_rewards.size()) + " raw rewards and " +
                    std::to_string(out.rewards.size()) + " rewards for " +
                    std::to_string(samples.size()) + " samples");
      return out;
    };
  }
  return [args](const std::vector<Sample>& samples) { return post_process_rewards(args, samples); };
}

}  // namespace vime::rollout
