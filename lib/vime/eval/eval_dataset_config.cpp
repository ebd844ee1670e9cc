#include "vime/eval/eval_dataset_config.hpp"

#include <algorithm>
#include <set>

#include "vime/core/yaml_json.hpp"
#include "vime/error.hpp"
#include "vime/eval/dataset_presets.hpp"

namespace vime::eval {
namespace {

std::optional<std::string> opt_string(const Json& fields, const char* key,
                                      const std::string& where) {
  const Json* v = fields.find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string())
    throw UsageError(where + ": '" + key + "' must be a string, got " + v->dump());
  return v->as_string();
}

template <class T>
std::optional<T> opt_number(const Json& fields, const char* key, const std::string& where) {
  const Json* v = fields.find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!v->is_int())
      throw UsageError(where + ": '" + key + "' must be an integer, got " + v->dump());
    return v->as_int();
  } else {
    if (!v->is_number())
      throw UsageError(where + ": '" + key + "' must be a number, got " + v->dump());
    return v->as_double();
  }
}

template <class T>
std::vector<T> list_of(const Json& fields, const char* key, const std::string& where) {
  std::vector<T> out;
  const Json* v = fields.find(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) throw UsageError(where + ": '" + key + "' must be a list, got " + v->dump());
  for (const Json& item : v->as_array()) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!item.is_string())
        throw UsageError(where + ": '" + key + "' must be a list of strings, got " + v->dump());
      out.push_back(item.as_string());
    } else {
      if (!item.is_int())
        throw UsageError(where + ": '" + key + "' must be a list of integers, got " + v->dump());
      out.push_back(item.as_int());
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

EvalDatasetConfig typed_config(Json fields, const std::string& where) {
  EvalDatasetConfig c;
  const auto name = opt_string(fields, "name", where);
  if (!name || name->empty()) throw UsageError(where + ": each eval dataset needs a 'name'");
  c.name = *name;
  const std::string at = where + ": dataset '" + c.name + "'";
  const auto path = opt_string(fields, "path", at);
  if (!path || path->empty()) throw UsageError(at + " needs a 'path'");
  c.path = *path;
  c.rm_type = opt_string(fields, "rm_type", at);
  c.custom_rm_path = opt_string(fields, "custom_rm_path", at);
  c.input_key = opt_string(fields, "input_key", at);
  c.label_key = opt_string(fields, "label_key", at);
  c.tool_key = opt_string(fields, "tool_key", at);
  c.metadata_key = opt_string(fields, "metadata_key", at);
  if (const Json* v = fields.find("apply_chat_template"); v && !v->is_null()) {
    if (!v->is_bool()) throw UsageError(at + ": 'apply_chat_template' must be true or false");
    c.apply_chat_template = v->as_bool();
  }
  if (const Json* v = fields.find("apply_chat_template_kwargs"); v && !v->is_null()) {
    if (!v->is_object()) throw UsageError(at + ": 'apply_chat_template_kwargs' must be a mapping");
    c.apply_chat_template_kwargs = *v;
  }
  c.prompt_template = opt_string(fields, "prompt_template", at).value_or("");
  c.label_transform = opt_string(fields, "label_transform", at).value_or("");
  c.n_samples_per_eval_prompt =
      opt_number<int64_t>(fields, "n_samples_per_eval_prompt", at).value_or(1);
  if (c.n_samples_per_eval_prompt < 1)
    throw UsageError(at + ": 'n_samples_per_eval_prompt' must be at least 1");
  c.temperature = opt_number<double>(fields, "temperature", at);
  c.top_p = opt_number<double>(fields, "top_p", at);
  c.top_k = opt_number<int64_t>(fields, "top_k", at);
  c.max_response_len = opt_number<int64_t>(fields, "max_response_len", at);
  c.min_new_tokens = opt_number<int64_t>(fields, "min_new_tokens", at);
  if (auto min_samples = opt_number<int64_t>(fields, "min_eval_samples", at);
      min_samples && *min_samples <= 0)
    throw UsageError(at + ": 'min_eval_samples' must be positive when set");
  c.stop = list_of<std::string>(fields, "stop", at);
  c.stop_token_ids = list_of<int64_t>(fields, "stop_token_ids", at);
  if (const Json* v = fields.find("metadata_overrides"); v && !v->is_null()) {
    if (!v->is_object()) throw UsageError(at + ": 'metadata_overrides' must be a mapping");
    c.metadata_overrides = *v;
  }
  c.fields = std::move(fields);
  return c;
}

}  // namespace

const std::vector<std::string>& eval_dataset_field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "name", "path", "rm_type", "custom_rm_path", "input_key", "label_key", "tool_key",
        "metadata_key", "multimodal_keys", "apply_chat_template", "apply_chat_template_kwargs",
        "chat_template_suffix_to_remove", "n_samples_per_eval_prompt", "temperature", "top_p",
        "top_k", "max_response_len", "stop", "stop_token_ids", "min_new_tokens",
        "repetition_penalty", "skip_special_tokens", "no_stop_trim",
        "custom_generate_function_path", "app_service", "eval_task_timeout", "min_eval_samples",
        "eval_early_stop_remaining", "eval_early_stop_idle_timeout", "message_processor",
        "reward_model", "remote_environment", "metadata_overrides",
        // vime: fields the --dataset presets fill in
        "prompt_template", "label_transform"};
    std::sort(n.begin(), n.end());
    return n;
  }();
  return names;
}

Json EvalDatasetConfig::inject_metadata(const Json& sample_metadata) const {
  Json metadata = sample_metadata.is_object() ? sample_metadata : Json::object();
  if (rm_type) metadata["rm_type"] = *rm_type;
  for (const auto& [key, value] : metadata_overrides.as_object()) metadata[key] = value;
  return metadata;
}

Json ensure_dataset_list(const Json& datasets, std::string_view where) {
  Json list = Json::array();
  if (datasets.is_null()) return list;
  if (datasets.is_object()) {
    for (const auto& [name, entry] : datasets.as_object()) {
      if (!entry.is_null() && !entry.is_object())
        throw UsageError(std::string(where) + ": eval.datasets." + name + " must be a mapping");
      Json dataset = entry.is_null() ? Json::object() : entry;
      if (!dataset.contains("name")) dataset["name"] = name;
      list.push_back(std::move(dataset));
    }
    return list;
  }
  if (datasets.is_array()) {
    for (const Json& entry : datasets.as_array()) {
      if (!entry.is_object() || !entry.contains("name"))
        throw UsageError(std::string(where) +
                         ": each eval dataset entry must be a mapping with a `name` field");
      list.push_back(entry);
    }
    return list;
  }
  throw UsageError(std::string(where) + ": eval.datasets must be either a list or a mapping");
}

std::vector<EvalDatasetConfig> build_eval_dataset_configs(const EvalOptions& options,
                                                          const Json& datasets,
                                                          const Json& defaults,
                                                          std::string_view where) {
  const std::string w(where);
  const Json defaults_object = defaults.is_null() ? Json::object() : defaults;
  if (!defaults_object.is_object()) throw UsageError(w + ": eval.defaults must be a mapping");
  const auto& valid = eval_dataset_field_names();
  auto is_valid = [&](const std::string& key) {
    return std::binary_search(valid.begin(), valid.end(), key);
  };
  std::vector<std::string> unknown;
  for (const auto& [key, value] : defaults_object.as_object())
    if (!is_valid(key)) unknown.push_back(key);
  if (!unknown.empty())
    throw UsageError(w + ": unknown key(s) in eval.defaults: " + joined(unknown) +
                     ". Valid keys: " + joined(valid));

  std::vector<EvalDatasetConfig> out;
  const Json entries = ensure_dataset_list(datasets, where);
  for (const Json& entry : entries.as_array()) {
    Json fields = entry;
    for (const auto& [key, value] : entry.as_object()) {
      if (!is_valid(key))
        throw UsageError(w + ": unknown key '" + key + "' in eval dataset " +
                         (entry.contains("name") ? entry.at("name").dump() : "") +
                         ". Valid keys: " + joined(valid));
    }
    std::set<std::string> resolved;
    for (const auto& [name, flag_value] : options.flag_fields.as_object()) {
      resolved.insert(name);
      if (entry.contains(name)) continue;
      if (const Json* d = defaults_object.find(name)) {
        fields[name] = *d;
        continue;
      }
      fields[name] = flag_value;
    }
    for (const auto& [key, value] : defaults_object.as_object())
      if (!resolved.count(key) && !fields.contains(key)) fields[key] = value;
    out.push_back(typed_config(std::move(fields), w));
  }
  return out;
}

std::vector<EvalDatasetConfig> load_eval_dataset_configs(const EvalOptions& options) {
  std::vector<EvalDatasetConfig> configs;
  if (options.eval_config) {
    const std::string& path = *options.eval_config;
    Json config = core::load_yaml_file(path, "--eval-config");
    const std::string where = "--eval-config " + path;
    const Json* eval = config.is_object() ? config.find("eval") : nullptr;
    if (eval == nullptr || !eval->is_object())
      throw UsageError(where + ": expected a top-level 'eval' mapping with 'datasets'");
    const Json* defaults = eval->find("defaults");
    const Json* datasets = eval->find("datasets");
    configs = build_eval_dataset_configs(options, datasets ? *datasets : Json(nullptr),
                                         defaults ? *defaults : Json(nullptr), where);
  } else if (!options.eval_prompt_data.empty()) {
    auto values = options.eval_prompt_data;
    if (values.size() == 1) values.insert(values.begin(), "aime");  // slime: a bare path is aime
    if (values.size() % 2 != 0)
      throw UsageError("--eval-prompt-data takes name path pairs, got " +
                       std::to_string(values.size()) + " values");
    Json list = Json::array();
    for (size_t i = 0; i < values.size(); i += 2)
      list.push_back(Json(Json::Object{{"name", Json(values[i])}, {"path", Json(values[i + 1])}}));
    configs = build_eval_dataset_configs(options, list, Json::object(), "--eval-prompt-data");
  }
  for (EvalDatasetConfig& preset : dataset_preset_configs(options))
    configs.push_back(std::move(preset));

  std::set<std::string> names;
  for (const auto& c : configs)
    if (!names.insert(c.name).second)
      throw UsageError("eval dataset '" + c.name +
                       "' is configured twice (--eval-config/--eval-prompt-data and --dataset)");
  return configs;
}

}  // namespace vime::eval
