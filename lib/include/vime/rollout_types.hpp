// What rollout functions, filters and data sources exchange (slime/rollout/base_types.py,
// filter_hub/base_types.py, the train-data dict of ray/rollout.py).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vime/json.hpp"
#include "vime/sample.hpp"

namespace vime {

using SampleGroup = std::vector<Sample>;  // the n samples of one prompt
using Metrics = std::map<std::string, double>;

struct RolloutFnTrainOutput {
  std::vector<SampleGroup> samples;
  Metrics metrics;
};

struct EvalDatasetResult {
  std::vector<double> rewards;
  std::vector<int32_t> truncated;  // 0/1 per sample
  std::vector<Sample> samples;
};

struct RolloutFnEvalOutput {
  std::map<std::string, EvalDatasetResult> data;  // by eval dataset name
  Metrics metrics;
};

// Returned by a dynamic sampling filter for each finished group.
struct DynamicFilterOutput {
  bool keep = true;
  std::string reason;                   // becomes rollout/dynamic_filter/drop_{reason}
  bool keep_when_insufficient = false;  // keep anyway once too few groups are left
};

// Samples flattened for the trainer (slime/ray/rollout.py::_convert_samples_to_train_data's dict).
struct TrainData {
  std::vector<std::vector<int32_t>> tokens;  // per sample: prompt + response
  std::vector<int64_t> response_lengths;
  std::vector<double> rewards;  // post-processed
  std::vector<double> raw_reward;
  std::vector<int32_t> truncated;  // 0/1
  std::vector<int64_t> sample_indices;
  std::vector<int64_t> rollout_ids;
  std::vector<std::vector<int32_t>> loss_masks;  // per sample: [response_length]
  std::vector<int64_t> rollout_mask_sums;        // Σ mask over the samples sharing a rollout id
  // Optional columns; empty when absent.
  std::vector<int64_t> round_number;
  std::vector<std::vector<float>> rollout_log_probs;
  std::vector<std::vector<float>> teacher_log_probs;
  std::vector<std::vector<int32_t>> rollout_top_p_token_ids;
  std::vector<std::vector<int32_t>> rollout_top_p_offsets;
  std::vector<std::vector<int32_t>> rollout_routed_experts;  // per sample: [(tokens-1)*layers*topk]
  std::vector<Json> metadata;
  std::vector<std::string> source_names;
};

// Where prompts come from (--data-source-path): slime's RolloutDataSource interface.
class DataSource {
 public:
  virtual ~DataSource() = default;
  // The next `num_groups` prompt groups, each with n_samples_per_prompt copies.
  virtual std::vector<SampleGroup> get_samples(int64_t num_groups) = 0;
  // Groups handed back (aborted partial rollouts); each must have n_samples_per_prompt samples.
  virtual void add_samples(std::vector<SampleGroup> groups) = 0;
  virtual void save(int64_t rollout_id) = 0;
  virtual void load(std::optional<int64_t> rollout_id) = 0;
  virtual int64_t size() const = 0;  // number of prompts in one epoch
};

}  // namespace vime
