// The data flags of a run, read once: which data source, the prompt dataset's keys, the built-in
// source's grouping, shuffling, checkpoint dirs and buffer order, and the rollout count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"
#include "vime/data/prompt_dataset.hpp"

namespace vime::data {

struct DataOptions {
  std::optional<std::string> data_source_path;  // --data-source-path: a plugin replaces the source
  // --prompt-data; unset under --disable-rollout-global-dataset.
  std::optional<std::string> prompt_data;
  DatasetOptions dataset;                         // DatasetOptions::from
  int64_t n_samples_per_prompt = 1;               // --n-samples-per-prompt
  bool shuffle = false;                           // --rollout-shuffle
  std::optional<std::string> save;                // --save
  std::optional<std::string> load;                // --load
  std::optional<std::string> buffer_filter_path;  // --buffer-filter-path
  bool buffer_sort_by_staleness = false;          // --buffer-sort-by-staleness
  std::optional<int64_t> num_rollout;             // --num-rollout
  std::optional<int64_t> num_epoch;               // --num-epoch
  std::optional<int64_t> rollout_batch_size;      // --rollout-batch-size

  static DataOptions from(const Args& args);
};

}  // namespace vime::data
