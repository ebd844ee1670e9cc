// Megatron's process groups for tensor x data parallelism, in its rank order: the tp ranks of one
// model replica are adjacent (global rank = dp_rank * tp + tp_rank), so a tensor-parallel group
// stays inside a node; the data-parallel group of a rank is every rank with its tp_rank.
#pragma once

#include <memory>

#include "vime/dist/process_group.hpp"

namespace vime::dist {

struct ParallelGroups {
  int tp_size = 1;
  int tp_rank = 0;
  int dp_rank = 0;
  std::unique_ptr<ProcessGroup> tp;  // null at tensor-parallel size 1
  std::unique_ptr<ProcessGroup> dp;  // null when the data-parallel group is `world` itself
  ProcessGroup* world = nullptr;     // may be null (a world of one)

  // The data-parallel group to reduce gradients and share samples over: dp, else world.
  ProcessGroup* data_parallel() const { return dp ? dp.get() : world; }
  ProcessGroup* tensor_parallel() const { return tp.get(); }
};

// Makes this rank's groups (every rank of `world` calls it). Throws UsageError naming
// --tensor-model-parallel-size when it does not divide the world size.
ParallelGroups make_parallel_groups(ProcessGroup* world, int tp_size);

}  // namespace vime::dist
