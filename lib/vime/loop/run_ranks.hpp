// The processes of a `vime train` run: one per GPU (vime's launcher, torchrun or Slurm), a world
// of one running alone; their tensor x data parallel groups in Megatron's rank order
// (tensor-parallel ranks adjacent). Rank 0 is the controller: it alone owns the data, the rollout
// and the metrics.
#pragma once

#include <memory>

#include "vime/args.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/loop/train_loop_options.hpp"

namespace vime::loop {

struct RunRanks {
  std::unique_ptr<dist::ProcessGroup> world;  // null alone
  dist::ParallelGroups groups;
  bool is_controller() const { return !world || world->rank() == 0; }
};

// Binds this rank's device, joins the world (every rank calls it) and seeds the RNG (--seed).
// Throws UsageError for --distributed-backend other than nccl on GPU ranks.
RunRanks start_ranks(const Args& args, const TrainLoopOptions& options,
                     const RunModelsOptions& models);

}  // namespace vime::loop
