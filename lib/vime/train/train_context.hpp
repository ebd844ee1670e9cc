// What every step of the trainer reads, made once per trainer: the parsed options, the trainer's
// plugins (loaded from their hook flags when set), and the Args the plugins receive (slime passes
// `args` to each of them).
#pragma once

#include "vime/args.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/train/train_options.hpp"
#include "vime/train_hooks.hpp"

namespace vime::train {

struct TrainPlugins {
  plugin::PluginFunction<PluginKind::kLoss> custom_loss;
  plugin::PluginFunction<PluginKind::kAdvantage> custom_advantage;
  plugin::PluginFunction<PluginKind::kTis> custom_tis;
  plugin::PluginFunction<PluginKind::kPgLossReducer> custom_pg_loss_reducer;
  plugin::PluginFunction<PluginKind::kRolloutDataPostprocess> rollout_data_postprocess;
  plugin::PluginFunction<PluginKind::kBeforeLogProbHook> before_log_prob;
  plugin::PluginFunction<PluginKind::kBeforeTrainStepHook> before_train_step;

  static TrainPlugins load(const Args& args);
};

struct TrainContext {
  // Parses the options and loads the plugins; throws UsageError on a bad flag value or plugin, and
  // for --loss-type custom_loss without --custom-loss-function-path. Keeps a reference to `args`.
  explicit TrainContext(const Args& args);

  const Args& args;
  TrainOptions options;
  TrainPlugins plugins;
};

}  // namespace vime::train
