// The built-in data source (slime/rollout/data_source.py::RolloutDataSourceWithBuffer): hands out
// prompt groups of n_samples_per_prompt copies in epoch order (reshuffled per epoch with
// --rollout-shuffle), serves groups handed back (aborted partial rollouts) first, and saves its
// position so that a resumed run sees exactly the prompts an uninterrupted run would.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vime/data/data_options.hpp"
#include "vime/data/prompt_dataset.hpp"
#include "vime/json.hpp"
#include "vime/rollout_types.hpp"

namespace vime::data {

// Takes up to `num_groups` groups out of `buffer` and returns them (slime's --buffer-filter-path).
using BufferFilter = std::function<std::vector<SampleGroup>(
    std::optional<int64_t> rollout_id, std::vector<SampleGroup>& buffer, int64_t num_groups)>;
std::vector<SampleGroup> pop_first(std::optional<int64_t> rollout_id,
                                   std::vector<SampleGroup>& buffer, int64_t num_groups);
// Groups with the oldest numeric weight version first (stable), then pop_first
// (--buffer-sort-by-staleness).
std::vector<SampleGroup> pop_oldest(std::optional<int64_t> rollout_id,
                                    std::vector<SampleGroup>& buffer, int64_t num_groups);

struct DataSourceOptions {
  int64_t n_samples_per_prompt = 1;
  bool shuffle = false;                           // --rollout-shuffle
  std::optional<std::filesystem::path> save_dir;  // --save
  std::optional<std::filesystem::path> load_dir;  // --load
  BufferFilter buffer_filter = pop_first;
};

class RolloutDataSource : public DataSource {
 public:
  // `dataset` may be null (--disable-rollout-global-dataset): prompts are then empty Samples.
  RolloutDataSource(std::shared_ptr<PromptDataset> dataset, DataSourceOptions options);
  // The dataset of --prompt-data (unless --disable-rollout-global-dataset) and the options of
  // --n-samples-per-prompt, --rollout-shuffle, --save, --load, --buffer-filter-path,
  // --buffer-sort-by-staleness.
  static std::unique_ptr<RolloutDataSource> from(const Args& args, PromptRenderer renderer = {},
                                                 TokenCounter count_tokens = {});
  // The same from options already read; `args` goes to the --buffer-filter-path plugin.
  static std::unique_ptr<RolloutDataSource> from_options(const Args& args, const DataOptions& data,
                                                         PromptRenderer renderer = {},
                                                         TokenCounter count_tokens = {});

  std::vector<SampleGroup> get_samples(int64_t num_groups) override;
  void add_samples(std::vector<SampleGroup> groups) override;
  // Writes {save}/rollout/global_dataset_state_dict_{id}.json atomically.
  void save(int64_t rollout_id) override;
  // Reads {load}/rollout/global_dataset_state_dict_{id}.json (id unset: the iteration in
  // {load}/latest_checkpointed_iteration.txt); a missing file leaves the source at its start.
  void load(std::optional<int64_t> rollout_id) override;
  int64_t size() const override;

  // slime's state dict {sample_offset, epoch_id, sample_group_index, sample_index, metadata}, plus
  // the buffer (slime drops it; vime keeps it so a resume replays the same groups).
  Json state_dict() const;
  void load_state_dict(const Json& state, const std::string& where = "data-source state");
  static std::filesystem::path state_path(const std::filesystem::path& dir, int64_t rollout_id);

  size_t buffer_size() const { return buffer_.size(); }
  int64_t epoch_id() const { return epoch_id_; }
  int64_t sample_offset() const { return sample_offset_; }
  Json& metadata() { return metadata_; }
  const PromptDataset* dataset() const { return dataset_.get(); }

 private:
  std::vector<SampleGroup> take_from_dataset(int64_t num_groups);
  void start_epoch(int64_t epoch);

  std::shared_ptr<PromptDataset> dataset_;
  DataSourceOptions options_;
  int64_t epoch_id_ = 0;
  int64_t sample_offset_ = 0;
  int64_t sample_group_index_ = 0;
  int64_t sample_index_ = 0;
  Json metadata_ = Json::object();
  std::vector<SampleGroup> buffer_;
};

// --num-rollout, else --num-epoch x (prompts per epoch / --rollout-batch-size), as slime derives
// it. Throws UsageError when neither is set or an epoch holds fewer prompts than one rollout.
int64_t resolve_num_rollout(const DataOptions& options, int64_t num_prompts_per_epoch);

}  // namespace vime::data
