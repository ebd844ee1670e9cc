#include "vime/eval/eval_samples.hpp"

#include "vime/error.hpp"

namespace vime::eval {

data::DatasetOptions eval_dataset_options(const EvalOptions& options,
                                          const EvalDatasetConfig& config) {
  data::DatasetOptions o;
  o.input_key = config.input_key.value_or("input");
  o.label_key = config.label_key;
  o.metadata_key = config.metadata_key.value_or("metadata");
  o.tool_key = config.tool_key;
  o.apply_chat_template = config.apply_chat_template;
  o.apply_chat_template_kwargs = config.apply_chat_template_kwargs;
  o.prompt_template = config.prompt_template;
  o.max_prompt_tokens = options.max_prompt_len;
  o.flag = "eval dataset '" + config.name + "'";
  return o;
}

Json transform_label(const Json& label, std::string_view transform) {
  if (transform.empty() || !label.is_string()) return label;
  if (transform != "gsm8k")
    throw UsageError("unknown label_transform '" + std::string(transform) + "'");
  const std::string& text = label.as_string();
  const size_t at = text.rfind("####");
  if (at == std::string::npos) return label;
  const size_t first = text.find_first_not_of(" \t\n\r", at + 4);
  if (first == std::string::npos) return Json("");
  const size_t last = text.find_last_not_of(" \t\n\r");
  return Json(text.substr(first, last - first + 1));
}

std::vector<SampleGroup> load_eval_samples(const EvalOptions& options,
                                           const EvalDatasetConfig& config,
                                           data::PromptRenderer renderer,
                                           data::TokenCounter count_tokens) {
  data::PromptDataset dataset(config.path, eval_dataset_options(options, config),
                              std::move(renderer), std::move(count_tokens));
  std::vector<SampleGroup> groups;
  groups.reserve(dataset.size());
  int64_t index = 0;
  for (size_t i = 0; i < dataset.size(); ++i) {
    Sample prompt = dataset.at(i);
    prompt.metadata = config.inject_metadata(prompt.metadata);
    prompt.label = transform_label(prompt.label, config.label_transform);
    prompt.group_index = static_cast<int64_t>(i);
    if (config.custom_rm_path) prompt.custom_rm_path = *config.custom_rm_path;
    if (const Json* gen = config.fields.find("custom_generate_function_path");
        gen && gen->is_string())
      prompt.generate_function_path = gen->as_string();
    SampleGroup group;
    for (int64_t j = 0; j < config.n_samples_per_eval_prompt; ++j) {
      Sample sample = prompt;
      sample.index = index++;
      group.push_back(std::move(sample));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace vime::eval
