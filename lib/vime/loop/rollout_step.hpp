// One rollout's step as every rank of `vime train` runs it (the body of slime's train.py loop
// after generate): the engines stop; --offload-train's optimizer state comes back to the device;
// the critic and the actor train on this rank's share of the batch; the checkpoint when the order
// says so; the optimizer state goes back to host memory; the engines take the new weights. Rank 0
// additionally owns the data, the rollout and the metrics, and joins the step through its
// StepRole; the other ranks take rank 0's order and run the same step as followers.
#pragma once

#include <cstdint>

#include "vime/loop/rank_channel.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/loop/trainer.hpp"

namespace vime::loop {

// What a rank does in the step beyond training.
class StepRole {
 public:
  virtual ~StepRole() = default;
  // The engines stopped; training starts.
  virtual void training_starts() {}
  // The models trained on `order` (the actor only when `actor_trained`); before any save.
  virtual void trained(const RolloutOrder& /*order*/, bool /*actor_trained*/,
                       const train::Metrics& /*critic_metrics*/) {}
  // The checkpoint of `rollout_id`, which every rank writes together.
  virtual void save(int64_t rollout_id) = 0;
  // The engines take the weights trained on `rollout_id`.
  virtual void update_weights(int64_t rollout_id) = 0;
};

void run_step(Trainer& trainer, RolloutBackend& backend, const TrainLoopOptions& options,
              RolloutOrder& order, StepRole& role);

// A data-parallel rank > 0: it writes its part of rank 0's checkpoint (and of the --save-hf
// gather), and bumps its engine's weights every rollout (its engine serves rank 0's requests).
class FollowerRole final : public StepRole {
 public:
  FollowerRole(Trainer& trainer, RolloutBackend& backend, const TrainLoopOptions& options, int rank)
      : trainer_(trainer), backend_(backend), options_(options), rank_(rank) {}
  void save(int64_t rollout_id) override;
  void update_weights(int64_t rollout_id) override;

 private:
  Trainer& trainer_;
  RolloutBackend& backend_;
  const TrainLoopOptions& options_;
  int rank_;
};

}  // namespace vime::loop
