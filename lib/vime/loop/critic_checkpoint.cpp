#include "vime/loop/critic_checkpoint.hpp"

#include <ATen/core/grad_mode.h>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"

namespace vime::loop {
namespace fs = std::filesystem;
namespace {

constexpr const char* kValueHeadFile = "value_head.safetensors";
constexpr const char* kValueHead = "value_head.weight";

}  // namespace

fs::path critic_save_dir(const fs::path& save_dir) { return save_dir / "critic"; }

void save_critic(const fs::path& save_dir, int64_t rollout_id, train::Critic& critic,
                 const Model& trunk, bool save_optimizer, dist::ProcessGroup* group) {
  const fs::path dir = critic_save_dir(save_dir);
  ckpt::TrainState state;
  state.iteration = rollout_id;
  state.optimizer_steps = critic.optimizer().num_steps();
  state.lr_scheduler_steps = critic.lr_scheduler().num_steps();
  ckpt::SaveOptions options;
  options.save_optimizer = save_optimizer;
  options.save_rng = false;  // the actor's checkpoint holds the run's RNG
  ckpt::save_checkpoint(dir, trunk, &critic.optimizer(), state, options, group);
  if (group != nullptr && group->rank() != 0) return;
  ckpt::write_safetensors(dir / ckpt::iteration_dir_name(rollout_id) / kValueHeadFile,
                          {{kValueHead, critic.value_head()}});
}

bool load_critic(const fs::path& actor_iter_dir, int64_t iteration, train::Critic& critic,
                 Model& trunk, bool load_optimizer, dist::ProcessGroup* group) {
  const fs::path dir = critic_save_dir(actor_iter_dir.parent_path());
  if (!fs::exists(dir / ckpt::iteration_dir_name(iteration))) return false;
  auto resolved = ckpt::resolve_checkpoint(dir, iteration);
  if (!resolved)
    throw Error(dir.string() + ": no critic checkpoint at iteration " + std::to_string(iteration));
  const auto state =
      ckpt::load_checkpoint(*resolved, trunk, load_optimizer ? &critic.optimizer() : nullptr,
                            /*load_rng=*/false, group);
  critic.lr_scheduler().set_num_steps(state.lr_scheduler_steps);
  const fs::path head = resolved->dir / kValueHeadFile;
  if (!fs::exists(head)) throw Error(head.string() + ": missing (the critic's value head)");
  ckpt::SafetensorsFile file(head);
  at::NoGradGuard no_grad;
  critic.value_head().copy_(file.get(kValueHead));
  if (!load_optimizer) critic.optimizer().sync_masters_from_params();
  return true;
}

}  // namespace vime::loop
