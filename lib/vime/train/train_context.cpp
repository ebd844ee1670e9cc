#include "vime/train/train_context.hpp"

#include "vime/error.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/train/builtin_tis.hpp"

namespace vime::train {

TrainPlugins TrainPlugins::load(const Args& args) {
  using plugin::load_hook_if_set;
  TrainPlugins p;
  p.custom_loss = load_hook_if_set<PluginKind::kLoss>(args, "custom_loss_function_path");
  p.custom_advantage =
      load_hook_if_set<PluginKind::kAdvantage>(args, "custom_advantage_function_path");
  if (auto builtin = builtin_tis_function(args)) {
    p.custom_tis = *builtin;
  } else {
    p.custom_tis = load_hook_if_set<PluginKind::kTis>(args, "custom_tis_function_path");
  }
  p.custom_pg_loss_reducer =
      load_hook_if_set<PluginKind::kPgLossReducer>(args, "custom_pg_loss_reducer_function_path");
  p.rollout_data_postprocess =
      load_hook_if_set<PluginKind::kRolloutDataPostprocess>(args, "rollout_data_postprocess_path");
  p.before_log_prob = load_hook_if_set<PluginKind::kBeforeLogProbHook>(
      args, "custom_megatron_before_log_prob_hook_path");
  p.before_train_step = load_hook_if_set<PluginKind::kBeforeTrainStepHook>(
      args, "custom_megatron_before_train_step_hook_path");
  return p;
}

TrainContext::TrainContext(const Args& a)
    : args(a), options(TrainOptions::from(a)), plugins(TrainPlugins::load(a)) {
  if (options.loss_type == LossType::kCustomLoss && !plugins.custom_loss) {
    throw UsageError("--loss-type custom_loss needs --custom-loss-function-path");
  }
}

}  // namespace vime::train
