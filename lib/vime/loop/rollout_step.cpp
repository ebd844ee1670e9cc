#include "vime/loop/rollout_step.hpp"

#include "vime/loop/trainer_schedule.hpp"

namespace vime::loop {

void run_step(Trainer& trainer, RolloutBackend& backend, const TrainLoopOptions& options,
              RolloutOrder& order, StepRole& role) {
  // The engines stop (and give memory back where they share the device) while training runs.
  backend.before_train();
  role.training_starts();
  if (options.offload_train) offload_train_state(trainer, false);
  // Every rank has the whole batch and trains its share (slime's DP split).
  const bool actor_trained = actor_trains(options, order.rollout_id, trainer.critic != nullptr);
  const auto critic_metrics =
      train_on(trainer, options, order.rollout_id, order.batch, actor_trained);
  role.trained(order, actor_trained, critic_metrics);
  if (order.save) role.save(order.rollout_id);
  if (options.offload_train) offload_train_state(trainer, true);
  role.update_weights(order.rollout_id);
}

void FollowerRole::save(int64_t rollout_id) {
  save_checkpoint(trainer_, options_, rollout_id);
  join_save_hf_gather(options_, *trainer_.actor_model, rank_);
}

void FollowerRole::update_weights(int64_t rollout_id) {
  backend_.update_weights(*trainer_.actor_model, rollout_id + 1);
}

}  // namespace vime::loop
