// --save-debug-rollout-data / --load-debug-rollout-data (slime's RolloutManager): the samples of a
// rollout as JSON {"rollout_id": id, "samples": [Sample.to_json...]}, at a path template whose
// "{rollout_id}" becomes the id ("eval_<id>" for eval data, as slime names it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vime/sample.hpp"

namespace vime::rollout {

std::filesystem::path debug_rollout_data_path(const std::string& path_template,
                                              const std::string& rollout_id);
// Creates parent directories; the file appears whole or not at all (core/atomic_file).
void save_debug_rollout_data(const std::filesystem::path& path, int64_t rollout_id,
                             const std::vector<Sample>& samples);
// Throws vime::Error naming the file when it is missing or not such a JSON document.
std::vector<Sample> load_debug_rollout_data(const std::filesystem::path& path);
// --load-debug-rollout-data-subsample, as slime slices it: with r = int(N * ratio), the first r //
// 2 and the last ceil(r / 2) samples (Python's data[:r//2] + data[-r//2:]; r = 0 keeps everything).
std::vector<Sample> subsample_debug_rollout_data(std::vector<Sample> samples, double ratio);

}  // namespace vime::rollout
