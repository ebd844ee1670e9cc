// The eval flags of a run, read once: where the eval datasets come from, the flags each dataset
// field falls back to, the prompt-length limit and the reward key of eval samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/json.hpp"

namespace vime::eval {

struct EvalOptions {
  std::optional<std::string> eval_config;     // --eval-config
  std::vector<std::string> eval_prompt_data;  // --eval-prompt-data name path pairs
  std::vector<std::string> dataset_names;     // --dataset
  std::vector<std::string> dataset_paths;     // --dataset-path
  // --n-samples-per-eval-prompt was given (not its default): it beats a --dataset preset's count.
  bool n_samples_per_eval_prompt_given = false;
  // An eval dataset field (temperature, input_key, ...) -> the value of the first set flag of
  // slime's DATASET_RUNTIME_SPECS / DATASET_SAMPLE_SPECS (eval flag, then rollout/train flag);
  // null when none is set. A dataset entry and eval.defaults come before these.
  Json flag_fields = Json::object();
  std::optional<int64_t> max_prompt_len;  // --eval-max-prompt-len, else --rollout-max-prompt-len
  std::optional<std::string> reward_key;  // --eval-reward-key, else --reward-key

  static EvalOptions from(const Args& args);
};

}  // namespace vime::eval
