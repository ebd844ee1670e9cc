#include "vime/metrics/metrics_options.hpp"

#include <string>

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"

namespace vime::metrics {
namespace {

using core::flag_on;

}  // namespace

MetricsLoggerOptions MetricsLoggerOptions::from(const Args& args) {
  MetricsLoggerOptions o;
  o.metrics_jsonl = args.get_optional_string("metrics_jsonl");
  o.save = args.get_optional_string("save");
  o.tensorboard_dir = args.get_optional_string("tensorboard_dir");
  o.use_tensorboard = args.get_bool("use_tensorboard");
  o.tb_project_name = args.get_optional_string("tb_project_name");
  o.tb_experiment_name = args.get_optional_string("tb_experiment_name");
  o.log_interval = args.get_int("log_interval");
  if (o.log_interval < 1)
    throw UsageError("--log-interval " + std::to_string(o.log_interval) + ": must be at least 1");
  return o;
}

RolloutStepOptions RolloutStepOptions::from(const Args& args) {
  RolloutStepOptions o;
  o.use_train_step = args.get_bool("wandb_always_use_train_step");
  if (o.use_train_step) {
    o.rollout_batch_size = args.get_int("rollout_batch_size");
    o.n_samples_per_prompt = args.get_int("n_samples_per_prompt");
    o.global_batch_size = args.get_int("global_batch_size");
  }
  return o;
}

SampleMetricsOptions SampleMetricsOptions::from(const Args& args) {
  SampleMetricsOptions o;
  o.zero_std = args.get_string("advantage_estimator") != "ppo";
  if (args.has("reward_key") && args.is_set("reward_key"))
    o.reward_key = args.get_string("reward_key");
  o.log_passrate = flag_on(args, "log_passrate");
  if (o.log_passrate) o.n_samples_per_prompt = args.get_int("n_samples_per_prompt");
  return o;
}

}  // namespace vime::metrics
