#include "vime/loop/trainer_schedule.hpp"

#include <ATen/core/grad_mode.h>

#include "vime/ckpt/hf_export.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"

namespace vime::loop {

bool actor_trains(const TrainLoopOptions& options, int64_t rollout_id, bool has_critic) {
  return !has_critic || rollout_id >= options.num_critic_only_steps;
}

void before_model_train(const TrainLoopOptions& options, Optimizer& optimizer) {
  if (options.reset_optimizer_states) optimizer.reset_states();
}

bool after_actor_train(const TrainLoopOptions& options, int64_t rollout_id, const Model& actor,
                       Model* reference) {
  const auto& interval = options.ref_update_interval;
  if (reference == nullptr || !interval || *interval <= 0 || (rollout_id + 1) % *interval != 0)
    return false;
  at::NoGradGuard no_grad;
  reference->load_tensors(actor.named_parameters(), "--ref-update-interval (the actor's weights)");
  return true;
}

std::filesystem::path save_hf_dir(const std::string& path_template, int64_t rollout_id) {
  static constexpr std::string_view kField = "{rollout_id}";
  std::string path = path_template;
  for (size_t at = path.find(kField); at != std::string::npos; at = path.find(kField, at)) {
    const std::string id = std::to_string(rollout_id);
    path.replace(at, kField.size(), id);
    at += id.size();
  }
  return path;
}

std::optional<std::filesystem::path> save_hf_copy(const TrainLoopOptions& options,
                                                  int64_t rollout_id, const Model& actor,
                                                  const std::optional<std::string>& origin) {
  if (!options.save_hf) return std::nullopt;
  if (!origin) {
    throw UsageError(
        "--save-hf needs --hf-checkpoint: the HF copy takes its tokenizer and "
        "config files from there");
  }
  const auto dir = save_hf_dir(*options.save_hf, rollout_id);
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path());
  ckpt::write_hf_directory(actor, dir, *origin);
  return dir;
}

void join_save_hf_gather(const TrainLoopOptions& options, const Model& actor, int global_rank) {
  const auto* group = actor.gather_group();
  // Megatron's rank order: global ranks 0 .. size-1 are rank 0's tensor- (or expert-) parallel
  // group.
  if (!options.save_hf || group == nullptr || global_rank == 0 || global_rank >= group->size())
    return;
  // The same gathers, in the same order, as rank 0's save_hf_model.
  (void)(actor.has_lora() ? actor.merged_hf_tensors() : actor.hf_tensors());
}

}  // namespace vime::loop
