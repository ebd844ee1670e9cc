#include "vime/rollout/rollout_options.hpp"

#include <algorithm>
#include <initializer_list>

#include "vime/core/args_lookup.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/error.hpp"

namespace vime::rollout {
namespace {

bool is_one_of(const std::string& value, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (value == name) return true;
  return false;
}

}  // namespace

RewardPostProcessOptions RewardPostProcessOptions::from(const Args& args) {
  RewardPostProcessOptions o;
  const std::string estimator = args.get_string("advantage_estimator");
  o.normalize = args.get_bool("rewards_normalization") &&
                is_one_of(estimator, {"grpo", "gspo", "cispo", "reinforce_plus_plus_baseline"});
  o.divide_by_std =
      is_one_of(estimator, {"grpo", "gspo", "cispo"}) && args.get_bool("grpo_std_normalization");
  o.n_samples_per_prompt = args.get_int("n_samples_per_prompt");
  o.rollout_batch_size = args.get_optional_int("rollout_batch_size");
  o.custom_path = args.get_optional_string("custom_reward_post_process_path");
  return o;
}

std::optional<OpdTeacherOptions> OpdTeacherOptions::from(const Args& args) {
  if (!args.get_bool("use_opd") || !args.is_set("opd_teacher_model")) return std::nullopt;
  const std::string type = args.get_optional_string("opd_type").value_or("");
  if (type != "vllm" && type != "sglang") return std::nullopt;
  OpdTeacherOptions o;
  o.model = args.get_string("opd_teacher_model");
  o.temperature = args.get_double("rollout_temperature");
  o.timeout_s = static_cast<double>(args.get_int("router_request_timeout_secs"));
  o.max_in_flight = std::max<int64_t>(args.get_int("vllm_server_concurrency"), 1);
  o.api_key = core::engine_api_key(args);
  const std::string flag = "--opd-teacher-model " + o.model;
  if (o.model.starts_with("http://") || o.model.starts_with("https://")) {
    std::string url = o.model;
    while (url.ends_with("/")) url.pop_back();
    o.urls.push_back(url);
    return o;
  }
  const Json* models = args.has("vllm_model_urls") && args.is_set("vllm_model_urls")
                           ? &args.get("vllm_model_urls")
                           : nullptr;
  if (models == nullptr || !models->is_object())
    throw UsageError(flag +
                     ": this run has no --vllm-config engines to find that model among; name a "
                     "model of --vllm-config (with --rollout-backend vllm) or give the teacher's "
                     "URL (http://host:port)");
  const Json* model = models->find(o.model);
  if (model == nullptr) {
    std::string names;
    for (const auto& [name, value] : models->as_object()) names += " " + name;
    throw UsageError(flag + ": --vllm-config has no model of that name (it has:" + names +
                     "); name one of them or give the teacher's URL (http://host:port)");
  }
  if (const Json* router = model->find("router"); router && router->is_string()) {
    o.urls.push_back(router->as_string());
  } else if (const Json* engines = model->find("engines"); engines && engines->is_array()) {
    for (const auto& url : engines->as_array()) o.urls.push_back(url.as_string());
  }
  if (o.urls.empty()) throw UsageError(flag + ": that --vllm-config model has no engine");
  return o;
}

int64_t RolloutOptions::batch_size() const {
  if (!rollout_batch_size) throw UsageError("--rollout-batch-size is required for a train rollout");
  return *rollout_batch_size;
}

RolloutOptions RolloutOptions::from(const Args& args) {
  RolloutOptions o;
  o.temperature = args.get_double("rollout_temperature");
  o.top_p = args.get_double("rollout_top_p");
  o.top_k = args.get_int("rollout_top_k");
  o.max_response_len = args.get_optional_int("rollout_max_response_len");
  o.stop = args.get_string_list("rollout_stop");
  o.stop_token_ids = args.get_int_list("rollout_stop_token_ids");
  o.skip_special_tokens = args.get_bool("rollout_skip_special_tokens");
  o.eval_temperature = args.get_optional_double("eval_temperature");
  o.eval_top_p = args.get_optional_double("eval_top_p");
  o.eval_top_k = args.get_optional_int("eval_top_k");
  o.eval_max_response_len = args.get_optional_int("eval_max_response_len");

  o.rollout_batch_size = args.get_optional_int("rollout_batch_size");
  o.over_sampling_batch_size = args.get_optional_int("over_sampling_batch_size");
  o.n_samples_per_prompt = args.get_int("n_samples_per_prompt");
  o.partial_rollout = args.get_bool("partial_rollout");
  o.mask_offpolicy_in_partial_rollout = args.get_bool("mask_offpolicy_in_partial_rollout");

  o.rollout_num_gpus = args.get_optional_int("rollout_num_gpus");
  o.on_gpus = o.rollout_num_gpus.has_value() || core::runtime_info().cuda_available;
  o.max_staleness = args.get_optional_int("max_staleness");
  o.rollout_num_gpus_per_engine = args.get_int("rollout_num_gpus_per_engine");
  o.vllm_server_concurrency = args.get_int("vllm_server_concurrency");
  if (args.get_bool("vllm_enable_deterministic_inference"))
    o.sampling_seed = args.get_int("rollout_seed");
  if (args.is_set(kSeedEachSampleArg) && args.get_bool(kSeedEachSampleArg))
    o.per_sample_seed = args.get_int("rollout_seed");
  o.group_rm = args.get_bool("group_rm");

  o.rollout_function_path = args.get_optional_string("rollout_function_path");
  o.eval_function_path = args.get_optional_string("eval_function_path");
  o.custom_generate_function_path = args.get_optional_string("custom_generate_function_path");
  o.sample_hook_paths = args.get_string_list("rollout_sample_hook_path");
  o.sample_filter_path = args.get_optional_string("rollout_sample_filter_path");
  o.all_samples_process_path = args.get_optional_string("rollout_all_samples_process_path");
  o.dynamic_sampling_filter_path = args.get_optional_string("dynamic_sampling_filter_path");
  o.rollout_log_path = args.get_optional_string("custom_rollout_log_function_path");
  o.eval_rollout_log_path = args.get_optional_string("custom_eval_rollout_log_function_path");
  o.convert_samples_to_train_data_path =
      args.get_optional_string("custom_convert_samples_to_train_data_path");
  o.reward_post_process = RewardPostProcessOptions::from(args);

  o.opd_teacher = OpdTeacherOptions::from(args);

  o.load_debug_rollout_data = args.get_optional_string("load_debug_rollout_data");
  o.load_debug_rollout_data_subsample =
      args.get_optional_double("load_debug_rollout_data_subsample");
  o.save_debug_rollout_data = args.get_optional_string("save_debug_rollout_data");
  return o;
}

}  // namespace vime::rollout
