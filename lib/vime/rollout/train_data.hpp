// Samples -> the trainer's TrainData (slime/ray/rollout.py::_convert_samples_to_train_data; spec
// §3), or the --custom-convert-samples-to-train-data-path plugin's version of it.
#pragma once

#include <functional>
#include <vector>

#include "vime/args.hpp"
#include "vime/rollout/reward_post_process.hpp"
#include "vime/rollout_types.hpp"

namespace vime::rollout {

// Rewards through `post_process`; a missing loss mask becomes 1s, remove_sample zeroes it;
// metadata.raw_reward overrides raw_reward and metadata.round_number fills round_number (when the
// first sample has them); rollout_log_probs / teacher_log_probs / top-p columns / train_metadata
// when the first sample has them; source_names from metadata.source_name ("unknown"). A sample
// without rollout_id gets a fresh one. Throws vime::Error when a mask's length is not the
// response length.
TrainData convert_samples_to_train_data(const Args& args, const std::vector<Sample>& samples,
                                        const RewardPostProcessor& post_process);

// rollout_ids (fresh ones for samples without) and rollout_mask_sums, filled in when empty (a
// custom convert plugin may leave them out). Throws when a column's length is not the sample count.
void complete_train_data(TrainData& data, const std::vector<Sample>& samples);

using TrainDataConverter = std::function<TrainData(const std::vector<Sample>& samples)>;
// The plugin of --custom-convert-samples-to-train-data-path bound to `args` (completed as above),
// else convert_samples_to_train_data with load_reward_post_processor.
TrainDataConverter load_train_data_converter(const Args& args, const RolloutOptions& options);

}  // namespace vime::rollout
