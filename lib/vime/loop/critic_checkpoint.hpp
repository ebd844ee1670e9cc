// PPO's critic in the run's checkpoints (slime saves the critic with the actor at each save): a
// Megatron-layout save directory of its own, <save>/critic/iter_NNNNNNN/ (trunk, optimizer, step
// counts) plus value_head.safetensors. The critic is written before the actor, so an actor
// checkpoint implies its critic; a resume from <load>/iter_N reads <load>/critic/iter_N.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "vime/model/model.hpp"
#include "vime/train/critic.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime::loop {

std::filesystem::path critic_save_dir(const std::filesystem::path& save_dir);

void save_critic(const std::filesystem::path& save_dir, int64_t rollout_id, train::Critic& critic,
                 const Model& trunk, bool save_optimizer, dist::ProcessGroup* group = nullptr);

// Restores the critic saved next to the actor checkpoint `actor_iter_dir` (an iter_NNNNNNN dir) at
// `iteration`. Returns false when there is none (a checkpoint of a run without a critic); throws
// vime::Error naming the file when it is incomplete.
bool load_critic(const std::filesystem::path& actor_iter_dir, int64_t iteration,
                 train::Critic& critic, Model& trunk, bool load_optimizer,
                 dist::ProcessGroup* group = nullptr);

}  // namespace vime::loop
