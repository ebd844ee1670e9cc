#include "vime/rollout/reward_post_process.hpp"

#include <cmath>

#include "vime/plugin/plugin_loader.hpp"

namespace vime::rollout {
namespace {

constexpr double kStdEpsilon = 1e-6;

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

RewardPostProcessOutput post_process_rewards(const Args& args,
                                             const RewardPostProcessOptions& options,
                                             const std::vector<Sample>& samples) {
  RewardPostProcessOutput out;
  out.raw_rewards.reserve(samples.size());
  for (const Sample& sample : samples) out.raw_rewards.push_back(sample.get_reward_value(args));
  if (!options.normalize) {
    out.rewards = out.raw_rewards;
    return out;
  }
  const auto n = static_cast<size_t>(options.n_samples_per_prompt);
  const auto& rollout_batch_size = options.rollout_batch_size;
  const bool full_batch =
      rollout_batch_size && samples.size() == n * static_cast<size_t>(*rollout_batch_size);
  out.rewards = normalize_group_rewards(out.raw_rewards, full_batch ? n : 0, options.divide_by_std);
  return out;
}

RewardPostProcessor load_reward_post_processor(const Args& args,
                                               const RewardPostProcessOptions& options) {
  if (const auto& spec = options.custom_path) {
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
  return [args, options](const std::vector<Sample>& samples) {
    return post_process_rewards(args, options, samples);
  };
}

}  // namespace vime::rollout
