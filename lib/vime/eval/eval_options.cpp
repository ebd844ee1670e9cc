#include "vime/eval/eval_options.hpp"

#include <initializer_list>

namespace vime::eval {
namespace {

Json first_set(std::initializer_list<Json> values) {
  for (const Json& value : values)
    if (!value.is_null()) return value;
  return nullptr;
}

}  // namespace

EvalOptions EvalOptions::from(const Args& args) {
  EvalOptions o;
  o.eval_config = args.get_optional_string("eval_config");
  o.eval_prompt_data = args.get_string_list("eval_prompt_data");
  if (args.has("dataset")) o.dataset_names = args.get_string_list("dataset");
  if (args.has("dataset_path")) o.dataset_paths = args.get_string_list("dataset_path");
  o.n_samples_per_eval_prompt_given =
      args.source("n_samples_per_eval_prompt") != ArgSource::kDefault;

  // slime's DATASET_RUNTIME_SPECS and DATASET_SAMPLE_SPECS. chat_template_suffix_to_remove and
  // eval_custom_rm_path are no vime flags: only a --custom-config-path file sets them.
  Json& f = o.flag_fields;
  f["n_samples_per_eval_prompt"] =
      first_set({args.get("n_samples_per_eval_prompt"), args.get("n_samples_per_prompt")});
  f["temperature"] = first_set({args.get("eval_temperature"), args.get("rollout_temperature")});
  f["top_p"] = first_set({args.get("eval_top_p"), args.get("rollout_top_p")});
  f["top_k"] = first_set({args.get("eval_top_k"), args.get("rollout_top_k")});
  f["max_response_len"] =
      first_set({args.get("eval_max_response_len"), args.get("rollout_max_response_len")});
  f["min_eval_samples"] = nullptr;
  f["stop"] = args.get("rollout_stop");
  f["stop_token_ids"] = args.get("rollout_stop_token_ids");
  f["min_new_tokens"] = args.get("eval_min_new_tokens");
  f["input_key"] = first_set({args.get("eval_input_key"), args.get("input_key")});
  f["label_key"] = first_set({args.get("eval_label_key"), args.get("label_key")});
  f["tool_key"] = first_set({args.get("eval_tool_key"), args.get("tool_key")});
  f["metadata_key"] = args.get("metadata_key");
  f["multimodal_keys"] = args.get("multimodal_keys");
  f["apply_chat_template"] = args.get("apply_chat_template");
  f["apply_chat_template_kwargs"] = args.get("apply_chat_template_kwargs");
  f["chat_template_suffix_to_remove"] = args.has("chat_template_suffix_to_remove")
                                            ? args.get("chat_template_suffix_to_remove")
                                            : Json(nullptr);
  f["custom_rm_path"] =
      first_set({args.has("eval_custom_rm_path") ? args.get("eval_custom_rm_path") : Json(nullptr),
                 args.get("custom_rm_path")});

  o.max_prompt_len = args.get_optional_int("eval_max_prompt_len");
  if (!o.max_prompt_len) o.max_prompt_len = args.get_optional_int("rollout_max_prompt_len");
  o.reward_key = args.get_optional_string("eval_reward_key");
  if (!o.reward_key) o.reward_key = args.get_optional_string("reward_key");
  return o;
}

}  // namespace vime::eval
