// The rollout manager's TrainData as the actor takes it, and the trainer's per-rollout means of it
// (slime's rollout/{rewards,raw_reward,response_lengths,total_lengths,truncated}).
#pragma once

#include "vime/rollout_types.hpp"
#include "vime/train/actor.hpp"

namespace vime::loop {

struct ConvertedBatch {
  train::TrainBatch batch;
  int64_t dropped_empty = 0;  // samples without a response token (nothing to train on)
};

// Rewards are the post-processed ones (the manager normalised them), as the actor takes them.
ConvertedBatch to_train_batch(const TrainData& data);

Metrics train_data_metrics(const TrainData& data);

}  // namespace vime::loop
