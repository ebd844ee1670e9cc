// vime's own launcher: `vime train --actor-num-nodes N --actor-num-gpus-per-node G` started once
// per node (and not already a rank: no torchrun/Slurm/VIME_RANK environment) starts the G local
// ranks itself: fork/exec of the same binary with the same argv, each with VIME_RANK,
// VIME_WORLD_SIZE, VIME_LOCAL_RANK, VIME_LOCAL_WORLD_SIZE, VIME_NODE_RANK, VIME_MASTER_ADDR,
// VIME_MASTER_PORT set (and the rest of the environment passed through unchanged: the GPU host's
// NCCL_NVLS_ENABLE=0 and friends must reach every rank), a parent-death signal, and each line
// of output prefixed "[rank k] ". When any rank exits non-zero or is killed, the others are torn
// down (SIGTERM, then SIGKILL after a grace period) and the launcher returns non-zero after one
// line naming the rank and how it ended: never a hang. Torch-free.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::dist {

struct LocalLaunchPlan {
  int num_nodes = 1;
  int gpus_per_node = 1;  // ranks started on this node
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;                 // 0: a free port (single node only)
  std::vector<std::string> argv;       // what each rank runs (argv[0] = this binary, resolved)
  std::string program = "vime train";  // names the job in the launcher's messages
};

// The plan when this process should launch ranks: more than one rank in all, and not itself a
// rank already (no VIME_RANK / RANK / SLURM_PROCID of a multi-task step in the environment).
// nullopt: run in place. --actor-num-gpus-per-node counts only when given on the command line
// (slime's default of 8 would otherwise start 8 ranks on any machine, and a --config file may be
// a --dry-run dump that spells the default out).
// `visible_gpus`: the CUDA devices this process sees (0 without CUDA: ranks then run on CPU and
// no count is checked); more local ranks than that is a UsageError naming the flag. `argv` is the
// command line as given (argv[0] is replaced by /proc/self/exe). Under torchrun/Slurm, an
// explicit --actor-num-nodes x --actor-num-gpus-per-node other than their world size is a
// UsageError too.
std::optional<LocalLaunchPlan> local_launch_plan(const Args& args,
                                                 const std::vector<std::string>& argv,
                                                 int visible_gpus);

// Runs the plan and blocks until every rank has ended; returns the exit code for main: 0 when
// every rank exited 0, else the failed rank's exit code (128 + signal when it was killed, or when
// the launcher itself got SIGINT/SIGTERM, which it forwards to the ranks). Ranks' output and the
// launcher's one-line verdict go to `console`. Call it from a thread that lives until it returns
// (the parent-death signal follows the forking thread).
int launch_local_ranks(const LocalLaunchPlan& plan, std::ostream& console);

}  // namespace vime::dist
