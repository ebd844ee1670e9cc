// Who this process is among the trainer's ranks, and where they meet: from vime's own launcher
// (VIME_* variables), torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) or Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE, with
// the master address from MASTER_ADDR or --master-addr). Torch-free.
#pragma once

#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::dist {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;   // 0 only for a world of one
  std::string launcher;  // "vime" | "torchrun" | "slurm" | "single"
  bool is_single() const { return world_size == 1; }
};

// The rank environment this process was started in (vime's launcher, then torchrun, then Slurm),
// with --master-addr / --master-port / --node-rank filling what the environment leaves unset.
// A world of one ("single") when none applies. Throws UsageError on inconsistent variables
// (RANK >= WORLD_SIZE, a non-numeric value, a missing MASTER_ADDR/MASTER_PORT for world > 1),
// naming the variable.
RankEnv rank_env_from_environment(const Args& args);

}  // namespace vime::dist
