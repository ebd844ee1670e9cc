#include "vime/eval/dataset_presets.hpp"

#include <cstdlib>
#include <filesystem>

#include "vime/error.hpp"

namespace vime::eval {
namespace {

// slime's eval default (examples/eval_multi_task/multi_task.yaml and the run-*.sh scripts'
// --eval-max-response-len).
constexpr int64_t kSlimeEvalMaxResponseLen = 16384;

constexpr std::string_view kBoxedInstruction =
    "{input}\nPlease reason step by step, and put your final answer within \\boxed{}.";

std::string preset_names() {
  std::string out;
  for (const auto& p : dataset_presets()) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

}  // namespace

const std::vector<DatasetPreset>& dataset_presets() {
  static const std::vector<DatasetPreset> presets = {
      {"math", "math500.jsonl", "math", "problem", "answer", kBoxedInstruction, "", 1,
       kSlimeEvalMaxResponseLen, "HuggingFaceH4/MATH-500 test.jsonl"},
      {"gsm8k", "gsm8k_test.jsonl", "math", "question", "answer", kBoxedInstruction, "gsm8k", 1,
       kSlimeEvalMaxResponseLen, "openai/gsm8k main test split as JSONL"},
      {"aime", "aime-2024.jsonl", "deepscaler", "prompt", "label", "", "", 16,
       kSlimeEvalMaxResponseLen, "slime's aime-2024.jsonl (zhuzilin/aime-2024)"},
      {"gpqa", "gpqa_eval.jsonl", "gpqa", "prompt", "label", "", "", 2, kSlimeEvalMaxResponseLen,
       "slime's gpqa_eval.jsonl"},
  };
  return presets;
}

const DatasetPreset* find_dataset_preset(std::string_view name) {
  for (const auto& p : dataset_presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<EvalDatasetConfig> dataset_preset_configs(const EvalOptions& options) {
  std::vector<EvalDatasetConfig> out;
  const auto& names = options.dataset_names;
  if (names.empty()) return out;
  const auto& paths = options.dataset_paths;
  if (!paths.empty() && paths.size() != names.size() && paths.size() != 1)
    throw UsageError("--dataset-path: give one path per --dataset name (" +
                     std::to_string(names.size()) + "), or one directory; got " +
                     std::to_string(paths.size()));
  const char* data_dir = std::getenv("VIME_DATA");

  Json list = Json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    const DatasetPreset* preset = find_dataset_preset(names[i]);
    if (preset == nullptr)
      throw UsageError("--dataset " + names[i] + ": unknown dataset; known: " + preset_names());
    std::filesystem::path path;
    if (!paths.empty()) {
      path = paths.size() == 1 ? paths[0] : paths[i];
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec))
        path /= preset->file_name;
      else if (paths.size() == 1 && names.size() > 1)
        throw UsageError("--dataset-path " + path.string() +
                         ": with several --dataset names, a single path must be a directory");
    } else if (data_dir != nullptr && *data_dir != '\0') {
      path = std::filesystem::path(data_dir) / preset->file_name;
    } else {
      throw UsageError("--dataset " + names[i] + ": say where the file is: --dataset-path " +
                       std::string(preset->file_name) + " (" + std::string(preset->source) +
                       "), or set $VIME_DATA to a directory holding " +
                       std::string(preset->file_name));
    }
    Json entry = Json::object();
    entry["name"] = std::string(preset->name);
    entry["path"] = path.string();
    entry["rm_type"] = std::string(preset->rm_type);
    entry["input_key"] = std::string(preset->input_key);
    entry["label_key"] = std::string(preset->label_key);
    // The preset's sample count, unless --n-samples-per-eval-prompt was given.
    if (!options.n_samples_per_eval_prompt_given)
      entry["n_samples_per_eval_prompt"] = preset->n_samples_per_eval_prompt;
    // Likewise the response length, unless --eval-max-response-len or
    // --rollout-max-response-len was given.
    if (const Json* flag = options.flag_fields.find("max_response_len"); !flag || flag->is_null())
      entry["max_response_len"] = preset->max_response_len;
    if (!preset->prompt_template.empty())
      entry["prompt_template"] = std::string(preset->prompt_template);
    if (!preset->label_transform.empty())
      entry["label_transform"] = std::string(preset->label_transform);
    list.push_back(std::move(entry));
  }
  return build_eval_dataset_configs(options, list, Json::object(), "--dataset");
}

}  // namespace vime::eval
