#include "vime/metrics/metric_steps.hpp"

namespace vime::metrics {

int64_t compute_rollout_step(const Args& args, int64_t rollout_id) {
  return compute_rollout_step(RolloutStepOptions::from(args), rollout_id);
}

int64_t compute_rollout_step(const RolloutStepOptions& options, int64_t rollout_id) {
  if (!options.use_train_step) return rollout_id;
  return rollout_id * options.rollout_batch_size * options.n_samples_per_prompt /
         options.global_batch_size;
}

int64_t compute_train_step(int64_t rollout_id, int64_t num_steps_per_rollout, int64_t step_id) {
  return rollout_id * num_steps_per_rollout + step_id;
}

}  // namespace vime::metrics
