// Group reward normalisation before advantages (slime/ray/rollout.py::_post_process_rewards; spec
// §4): for grpo, gspo, cispo and reinforce_plus_plus_baseline (unless
// --disable-rewards-normalization), each prompt group's rewards are mean-centred, and for grpo,
// gspo and cispo also divided by the group's unbiased std + 1e-6 (unless
// --disable-grpo-std-normalization).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vime/hooks.hpp"
#include "vime/rollout/rollout_options.hpp"

namespace vime::rollout {

// r - mean(group) (then / (std_unbiased(group) + 1e-6) when `divide_by_std`), over consecutive
// groups of `group_size` rewards; `group_size` 0 or one not dividing the count makes the whole
// batch one group. A group of one has no std: its reward becomes 0 (slime's torch.std gives NaN).
std::vector<double> normalize_group_rewards(const std::vector<double>& rewards, size_t group_size,
                                            bool divide_by_std);

// raw = each sample's reward value (get_reward_value(args): --reward-key applied); rewards = raw
// normalised as above when `options` ask for it, else raw. Groups are --n-samples-per-prompt
// samples when the count is n_samples_per_prompt x rollout_batch_size, else the whole batch, as in
// slime.
RewardPostProcessOutput post_process_rewards(const Args& args,
                                             const RewardPostProcessOptions& options,
                                             const std::vector<Sample>& samples);

using RewardPostProcessor =
    std::function<RewardPostProcessOutput(const std::vector<Sample>& samples)>;
// --custom-reward-post-process-path bound to `args` when set (it replaces group normalisation),
// else post_process_rewards. Throws UsageError naming the flag when the plugin cannot be loaded.
RewardPostProcessor load_reward_post_processor(const Args& args,
                                               const RewardPostProcessOptions& options);

}  // namespace vime::rollout
