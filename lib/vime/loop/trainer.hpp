// The trainer's side of `vime train` on one rank (slime's actor and critic train groups): the
// actor with its optimizer and LR schedule, the reference model, PPO's critic, an on-policy
// distillation teacher, and the phase timer they report to; how they train on one rollout, save,
// and move their optimizer state to host memory and back.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>

#include "vime/args.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/metrics/phase_timer.hpp"
#include "vime/model/model.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/critic.hpp"
#include "vime/train/rank_reducer.hpp"

namespace vime::loop {

struct Trainer {
  std::unique_ptr<Model> actor_model, ref_model, critic_trunk, teacher_model;
  std::unique_ptr<train::RankReducer> reducer;  // SingleRank, or the data-parallel c10d group
  dist::ProcessGroup* world = nullptr;          // every rank (checkpoints); null alone
  metrics::PhaseTimer timer;
  std::unique_ptr<train::Actor> actor;
  std::unique_ptr<train::Critic> critic;
  ckpt::ResumeResult resume;
  std::string base_model;  // --ref-load (else --hf-checkpoint): a LoRA adapter's base model
};

// Actor from --load / --ref-load / --hf-checkpoint (resumed with its optimizer), the reference
// model, the critic; then the init hook (slime's custom_megatron_init_path).
std::unique_ptr<Trainer> make_trainer(const Args& args, const TrainLoopOptions& options,
                                      const RunModelsOptions& models,
                                      const dist::ParallelGroups& groups, std::ostream& console);

// Trains on one rollout: critic values first (PPO), then the actor (unless the critic trains alone
// this rollout), then the critic on the actor's returns. Returns the critic's metrics.
train::Metrics train_on(Trainer& t, const TrainLoopOptions& options, int64_t rollout_id,
                        train::TrainBatch& batch, bool actor_trains);

// A Megatron-layout checkpoint of rollout `rollout_id` (the critic's first), written by every rank
// together (rank 0: the model; with the distributed optimizer each rank its optimizer shard).
void save_checkpoint(Trainer& t, const TrainLoopOptions& options, int64_t rollout_id);

// --offload-train: optimizer state (masters, Adam moments, main grads) in host memory while the
// rollout runs (`offload`), back on the device for training.
void offload_train_state(Trainer& t, bool offload);

}  // namespace vime::loop
