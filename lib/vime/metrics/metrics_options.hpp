// The metrics flags, read once, one struct per consumer: where the logger writes, the x-axis of
// rollout/step, and what the sample metrics need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::metrics {

struct MetricsLoggerOptions {
  std::optional<std::string> metrics_jsonl;       // --metrics-jsonl
  std::optional<std::string> save;                // --save (metrics.jsonl goes there)
  std::optional<std::string> tensorboard_dir;     // --tensorboard-dir
  bool use_tensorboard = false;                   // --use-tensorboard
  std::optional<std::string> tb_project_name;     // --tb-project-name
  std::optional<std::string> tb_experiment_name;  // --tb-experiment-name
  int64_t log_interval = 1;                       // --log-interval: console lines

  // Throws UsageError for a --log-interval below 1.
  static MetricsLoggerOptions from(const Args& args);
};

struct RolloutStepOptions {
  bool use_train_step = false;  // --wandb-always-use-train-step
  // Read (and required) only with use_train_step: the builder names the unset flag.
  int64_t rollout_batch_size = 0;    // --rollout-batch-size
  int64_t n_samples_per_prompt = 1;  // --n-samples-per-prompt
  int64_t global_batch_size = 1;     // --global-batch-size

  static RolloutStepOptions from(const Args& args);
};

struct SampleMetricsOptions {
  bool zero_std = true;                   // zero_std/* counts; off for --advantage-estimator ppo
  std::optional<std::string> reward_key;  // --reward-key
  bool log_passrate = false;              // --log-passrate
  int64_t n_samples_per_prompt = 1;       // --n-samples-per-prompt: the pass@k group size

  static SampleMetricsOptions from(const Args& args);
};

}  // namespace vime::metrics
