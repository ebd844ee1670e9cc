// Training checkpoints in Megatron's layout, as slime's: save/latest_checkpointed_iteration.txt and
// save/iter_0000100/ (the iteration is the rollout id), holding
//   model/             config.json + model.safetensors (HF names, padded vocabulary)
//   optimizer_rank_00000.safetensors   AdamW moments and fp32 masters (one replica of them), or
//   optimizer/         the distributed optimizer's per-rank shards (optimizer_shards.hpp)
//   adapter/           a model with LoRA adapters: them, in PEFT's files (peft_adapter.hpp)
//   rng.safetensors    the CPU generator state
//   state.json         step counters, the LR scheduler, the data source's state, the args
// An iteration is written to a temp dir and renamed into place, then the tracker file is replaced,
// so a crash never leaves a half checkpoint that looks whole; with several ranks every rank writes
// into the same temp dir and rank 0 renames it once all have written. An HF directory is accepted
// wherever a checkpoint is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "vime/args.hpp"
#include "vime/ckpt/checkpoint_options.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/json.hpp"
#include "vime/model/model.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::ckpt {

struct TrainState {
  int64_t iteration = 0;  // the rollout id of the checkpoint; training resumes at + 1
  int64_t optimizer_steps = 0;
  int64_t lr_scheduler_steps = 0;
  Json data_source = nullptr;  // opaque to the checkpoint: the data source's state_dict
  Json args = nullptr;         // the run's resolved args, for the record
};

struct SaveOptions {
  bool save_optimizer = true;  // --no-save-optim turns it off
  bool save_rng = true;        // --no-save-rng turns it off
  // A model with LoRA adapters: its adapter_config.json's base_model_name_or_path.
  std::string base_model;
};

std::string iteration_dir_name(int64_t iteration);  // "iter_0000100"

// `group`: the data-parallel ranks (null: alone); then every rank calls it (a collective): rank 0
// writes the model, RNG and state, each rank its optimizer shard when the optimizer is sharded.
// Throws on every rank, naming the rank, when any rank failed to write.
void save_checkpoint(const std::filesystem::path& save_dir, const Model& model,
                     const Optimizer* optimizer, const TrainState& state,
                     const SaveOptions& options = {}, dist::ProcessGroup* group = nullptr);

// slime's --save-interval: save after rollout `rollout_id` when (id + 1) % interval == 0, and
// after the last rollout.
bool should_save(const CheckpointOptions& options, int64_t rollout_id, int64_t num_rollouts);

// Where a --load / --ref-load path points: an HF dir, an iter_NNNNNNN dir, or a save dir whose
// tracker file (or `step`, from --ckpt-step) names the iteration. nullopt when nothing is there.
struct ResolvedCheckpoint {
  std::filesystem::path dir;  // the HF dir or the iter dir
  bool is_hf = false;
  int64_t iteration = 0;
};
std::optional<ResolvedCheckpoint> resolve_checkpoint(const std::filesystem::path& path,
                                                     std::optional<int64_t> step = std::nullopt);

ModelConfig checkpoint_model_config(const ResolvedCheckpoint& checkpoint);
// The model of a checkpoint or HF dir, in `dtype` on `device` (this rank's shards of it under
// tensor parallelism `tp`); a checkpoint's LoRA adapter merged into it.
std::unique_ptr<Model> load_model(const ResolvedCheckpoint& checkpoint, at::ScalarType dtype,
                                  const at::Device& device, TensorParallel tp = {});
// The dtype the checkpoint's model tensors are stored in.
at::ScalarType stored_dtype(const ResolvedCheckpoint& checkpoint);

// Restores model weights (with the checkpoint's LoRA adapter: loaded into a model with adapters,
// merged into one without when no optimizer state is asked for), and optionally the optimizer
// (null: skip), RNG and TrainState. The optimizer's state loads from a checkpoint of any
// data-parallel size, sharded or not. With a `group` every rank calls it, and an error on any rank
// is thrown on all of them.
TrainState load_checkpoint(const ResolvedCheckpoint& checkpoint, Model& model, Optimizer* optimizer,
                           bool load_rng, dist::ProcessGroup* group = nullptr);

// slime's resume rules: --load (with --ckpt-step) if it holds a checkpoint, else --ref-load as a
// fresh start (finetune: no optimizer, no RNG, iteration counters at 0). --load may name a PEFT
// adapter dir: the base then comes from --ref-load and the adapter starts the run. Returns the
// state and whether anything was loaded. --no-load-optim / --no-load-rng / --finetune are honoured.
struct ResumeResult {
  bool is_loaded = false;
  bool is_resumed = false;  // from --load: the next rollout is state.iteration + 1
  TrainState state;
  std::filesystem::path from;
};
ResumeResult load_for_training(const Args& args, Model& model, Optimizer& optimizer,
                               LrScheduler& lr_scheduler, dist::ProcessGroup* group = nullptr);

}  // namespace vime::ckpt
