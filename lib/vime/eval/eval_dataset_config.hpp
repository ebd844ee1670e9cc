// Eval datasets (slime/utils/eval_config.py): from --eval-prompt-data name/path pairs or
// the YAML --eval-config (eval.defaults + eval.datasets), each field resolved as
// dataset entry > eval.defaults > eval flag > rollout/train flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vime/eval/eval_options.hpp"
#include "vime/json.hpp"

namespace vime::eval {

struct EvalDatasetConfig {
  std::string name;
  std::string path;  // may carry a @[a:b] slice
  std::optional<std::string> rm_type;
  std::optional<std::string> custom_rm_path;

  std::optional<std::string> input_key;
  std::optional<std::string> label_key;
  std::optional<std::string> tool_key;
  std::optional<std::string> metadata_key;
  bool apply_chat_template = false;
  Json apply_chat_template_kwargs = Json::object();
  std::string
      prompt_template;  // vime: "{input}" is replaced by a string prompt (--dataset presets)
  std::string label_transform;  // vime: "gsm8k" keeps what follows "####" in a string label

  int64_t n_samples_per_eval_prompt = 1;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> top_k;
  std::optional<int64_t> max_response_len;
  std::optional<int64_t> min_new_tokens;
  std::vector<std::string> stop;
  std::vector<int64_t> stop_token_ids;
  Json metadata_overrides = Json::object();

  // Every field after resolution, including those without a member above (repetition_penalty,
  // app_service, eval_task_timeout, ...).
  Json fields = Json::object();

  // The sample's metadata with rm_type and metadata_overrides applied (slime's inject_metadata).
  Json inject_metadata(const Json& sample_metadata) const;
};

// The field names an eval dataset entry or eval.defaults may use.
const std::vector<std::string>& eval_dataset_field_names();

// eval.datasets as a list of objects: a list (each entry needs "name") or a mapping keyed by name.
// `where` names the file in errors.
Json ensure_dataset_list(const Json& datasets, std::string_view where);

// Resolves each raw entry against `defaults` and the flags of `options`. Throws UsageError naming
// `where` for an unknown key in defaults or in an entry, a missing name/path, or a value of the
// wrong type.
std::vector<EvalDatasetConfig> build_eval_dataset_configs(const EvalOptions& options,
                                                          const Json& datasets,
                                                          const Json& defaults,
                                                          std::string_view where);

// The eval datasets of a run: --eval-config if set, else --eval-prompt-data pairs; then the
// --dataset presets. Empty when none is configured. Dataset names must be unique.
std::vector<EvalDatasetConfig> load_eval_dataset_configs(const EvalOptions& options);

}  // namespace vime::eval
