#include "vime/plugin/hook_flags.hpp"

#include "vime/error.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::plugin {
namespace {

constexpr HookFlag kHookFlags[] = {
    {"rollout_function_path", PluginKind::kRollout, "generate_rollout"},
    {"eval_function_path", PluginKind::kRollout, "generate_rollout"},
    {"custom_generate_function_path", PluginKind::kGenerate, "generate"},
    {"rollout_sample_hook_path", PluginKind::kSampleHook, "sample_hook"},
    {"custom_rm_path", PluginKind::kReward, "reward"},
    {"dynamic_sampling_filter_path", PluginKind::kDynamicFilter, "dynamic_filter"},
    {"buffer_filter_path", PluginKind::kBufferFilter, "buffer_filter"},
    {"rollout_sample_filter_path", PluginKind::kSampleFilter, "sample_filter"},
    {"rollout_all_samples_process_path", PluginKind::kAllSamplesProcess, "all_samples_process"},
    {"custom_reward_post_process_path", PluginKind::kRewardPostProcess, "reward_post_process"},
    {"custom_convert_samples_to_train_data_path", PluginKind::kConvertSamples,
     "convert_samples_to_train_data"},
    {"custom_rollout_log_function_path", PluginKind::kRolloutLog, "rollout_log"},
    {"custom_eval_rollout_log_function_path", PluginKind::kEvalRolloutLog, "eval_rollout_log"},
    {"data_source_path", PluginKind::kDataSource, "data_source"},
    {"custom_megatron_init_path", PluginKind::kInitHook, "init"},
    {"custom_update_weight_post_write_path", PluginKind::kUpdateWeightPostWrite, "post_write"},
    {"rollout_data_postprocess_path", PluginKind::kRolloutDataPostprocess,
     "rollout_data_postprocess"},
    {"custom_loss_function_path", PluginKind::kLoss, "loss"},
    {"custom_advantage_function_path", PluginKind::kAdvantage, "compute_advantages"},
    {"custom_tis_function_path", PluginKind::kTis, "tis"},
    {"custom_pg_loss_reducer_function_path", PluginKind::kPgLossReducer, "pg_loss_reducer"},
    {"custom_megatron_before_log_prob_hook_path", PluginKind::kBeforeLogProbHook,
     "before_log_prob"},
    {"custom_megatron_before_train_step_hook_path", PluginKind::kBeforeTrainStepHook,
     "before_train_step"},
    {"custom_model_provider_path", PluginKind::kModelProvider, "model_provider"},
};

}  // namespace

std::span<const HookFlag> hook_flags() { return kHookFlags; }

const HookFlag& hook_flag(std::string_view dest) {
  for (const auto& hook : kHookFlags) {
    if (hook.dest == dest) return hook;
  }
  throw Error("internal: " + std::string(dest) + " is not a hook flag");
}

PluginKind required_kind(const HookFlag& hook, const Args& args) {
  if (hook.kind == PluginKind::kReward && args.has("group_rm") && args.get("group_rm").is_bool() &&
      args.get_bool("group_rm")) {
    return PluginKind::kGroupReward;
  }
  return hook.kind;
}

}  // namespace vime::plugin
