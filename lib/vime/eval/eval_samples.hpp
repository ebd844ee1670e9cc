// The prompts of one eval dataset as sample groups (slime's eval_rollout): each prompt repeated
// n_samples_per_eval_prompt times with a running index, rm_type and metadata_overrides injected.
#pragma once

#include <vector>

#include "vime/data/prompt_dataset.hpp"
#include "vime/eval/eval_dataset_config.hpp"
#include "vime/eval/eval_options.hpp"
#include "vime/rollout_types.hpp"

namespace vime::eval {

// Dataset options of `config` (keys, chat template, prompt template; the prompt-length limit of
// --eval-max-prompt-len, else --rollout-max-prompt-len).
data::DatasetOptions eval_dataset_options(const EvalOptions& options,
                                          const EvalDatasetConfig& config);

// group_index is the prompt's position in the file, index runs over all samples.
std::vector<SampleGroup> load_eval_samples(const EvalOptions& options,
                                           const EvalDatasetConfig& config,
                                           data::PromptRenderer renderer = {},
                                           data::TokenCounter count_tokens = {});

// "gsm8k": the text after the last "####" of a string label, trimmed; other labels unchanged.
Json transform_label(const Json& label, std::string_view transform);

}  // namespace vime::eval
