// The x-axis values logged under slime's step keys (utils/metric_utils.py::compute_rollout_step,
// the trainer's accumulated step id).
#pragma once

#include <cstdint>

#include "vime/args.hpp"
#include "vime/metrics/metrics_options.hpp"

namespace vime::metrics {

// rollout/step and eval/step: the rollout id, or with --wandb-always-use-train-step the train step
// it corresponds to, id * rollout_batch_size * n_samples_per_prompt // global_batch_size. Throws
// vime::Error naming the flag when one of them is unset.
int64_t compute_rollout_step(const Args& args, int64_t rollout_id);
int64_t compute_rollout_step(const RolloutStepOptions& options, int64_t rollout_id);
// train/step: rollout_id * num_steps_per_rollout + step_id.
int64_t compute_train_step(int64_t rollout_id, int64_t num_steps_per_rollout, int64_t step_id);

}  // namespace vime::metrics
