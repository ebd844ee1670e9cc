// `--dataset NAME` presets for eval (vime): the reward model, keys, prompt template, samples per
// prompt and response length of common benchmarks, so `--dataset aime --dataset-path
// /d/aime-2024.jsonl` is a whole eval setup. The counts and lengths are slime's for the dataset
// (examples/eval_multi_task/multi_task.yaml: max_response_len 16384; aime 16 samples with
// deepscaler, gpqa 2). The file comes from --dataset-path (a file, or a directory holding the
// preset's file name) or from $VIME_DATA/<file name>.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "vime/eval/eval_dataset_config.hpp"

namespace vime::eval {

struct DatasetPreset {
  std::string_view name;
  std::string_view file_name;  // looked up under --dataset-path (a directory) or $VIME_DATA
  std::string_view rm_type;
  std::string_view input_key;
  std::string_view label_key;
  std::string_view prompt_template;   // "{input}" is the row's prompt; empty: the prompt as is
  std::string_view label_transform;   // "gsm8k": the number after "####"
  int64_t n_samples_per_eval_prompt;  // unless --n-samples-per-eval-prompt is given
  int64_t max_response_len;  // unless --eval-max-response-len / --rollout-max-response-len is
  std::string_view source;   // where the file comes from, for --help and errors
};

const std::vector<DatasetPreset>& dataset_presets();
const DatasetPreset* find_dataset_preset(std::string_view name);

// The eval datasets of --dataset NAME... (with --dataset-path PATH..., one per name, or
// $VIME_DATA). Throws UsageError for an unknown name, a path count that does not match, or no
// place to find the file.
std::vector<EvalDatasetConfig> dataset_preset_configs(const EvalOptions& options);

}  // namespace vime::eval
