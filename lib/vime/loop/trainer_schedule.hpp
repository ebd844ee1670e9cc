// What slime's trainer does around each rollout's training, by flag (train.py, ppo_utils.py,
// megatron checkpointing):
//   --num-critic-only-steps N  with a critic (PPO), the actor trains only once rollout_id >= N;
//   --reset-optimizer-states   each model's Adam starts afresh (zero moments, step 0) at the
//                              start of every rollout's training, as slime's train() does;
//   --ref-update-interval N    after the actor trained on rollout id, the reference model takes
//                              the actor's weights when (id + 1) % N == 0;
//   --save-hf TEMPLATE         an HF directory of the actor at each save, {rollout_id} filled in.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "vime/loop/train_loop_options.hpp"
#include "vime/model/model.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::loop {

bool actor_trains(const TrainLoopOptions& options, int64_t rollout_id, bool has_critic);

// Before a model's training on a rollout.
void before_model_train(const TrainLoopOptions& options, Optimizer& optimizer);

// After the actor trained on `rollout_id`; true when the reference model took its weights. A null
// reference model (no KL term reads one) takes nothing.
bool after_actor_train(const TrainLoopOptions& options, int64_t rollout_id, const Model& actor,
                       Model* reference);

// --save-hf's directory for `rollout_id` (every "{rollout_id}" replaced).
std::filesystem::path save_hf_dir(const std::string& path_template, int64_t rollout_id);

// Writes the HF copy of `actor` when --save-hf is set; `origin` (--hf-checkpoint) gives the
// tokenizer and the other non-weight files. Returns the directory written. Rank 0 calls it; under
// tensor parallelism the other ranks of its group call join_save_hf_gather at the same save.
std::optional<std::filesystem::path> save_hf_copy(const TrainLoopOptions& options,
                                                  int64_t rollout_id, const Model& actor,
                                                  const std::optional<std::string>& origin);

// --save-hf under tensor parallelism, on the ranks of global rank 0's tensor-parallel group other
// than rank 0: takes part in gathering the whole tensors rank 0 writes (nothing elsewhere).
void join_save_hf_gather(const TrainLoopOptions& options, const Model& actor, int global_rank);

}  // namespace vime::loop
