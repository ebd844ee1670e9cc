// Megatron's process groups for tensor x context x data parallelism, in its rank order (tp-cp-dp):
// global rank = (dp_rank * cp + cp_rank) * tp + tp_rank. The tp ranks of one model replica are
// adjacent, so a tensor-parallel group stays inside a node; the cp ranks of a replica share its
// samples (each holds part of every sequence); the data-parallel group of a rank is every rank
// with its tp_rank and cp_rank. Gradients are reduced over data x context parallel ranks
// (Megatron's get_data_parallel_group(with_context_parallel=True)). Expert parallelism (tensor and
// context parallel size 1) splits the data-parallel ranks into expert-parallel groups of
// consecutive ranks; the ranks at the same place of every such group form the expert-data-parallel
// group (Megatron's expert layout with --expert-tensor-parallel-size 1).
#pragma once

#include <memory>

#include "vime/dist/process_group.hpp"

namespace vime::dist {

struct ParallelGroups {
  int tp_size = 1;
  int tp_rank = 0;
  int cp_size = 1;
  int cp_rank = 0;
  int dp_rank = 0;
  int ep_size = 1;
  int ep_rank = 0;
  std::unique_ptr<ProcessGroup> tp;     // null at tensor-parallel size 1
  std::unique_ptr<ProcessGroup> cp;     // null at context-parallel size 1
  std::unique_ptr<ProcessGroup> dp;     // null when the data-parallel group is `world` itself
  std::unique_ptr<ProcessGroup> dp_cp;  // null unless both tp and cp are > 1
  std::unique_ptr<ProcessGroup> ep;     // null at expert-parallel size 1
  std::unique_ptr<ProcessGroup> ep_dp;  // null unless data-parallel size / ep_size > 1 (and ep > 1)
  ProcessGroup* world = nullptr;        // may be null (a world of one)

  // The data-parallel group to share samples over: dp, else world.
  ProcessGroup* data_parallel() const { return dp ? dp.get() : world; }
  ProcessGroup* tensor_parallel() const { return tp.get(); }
  ProcessGroup* context_parallel() const { return cp.get(); }
  ProcessGroup* expert_parallel() const { return ep.get(); }
  ProcessGroup* expert_data_parallel() const { return ep_dp.get(); }
  // The ranks that reduce gradients (and shard a distributed optimizer): data x context parallel.
  ProcessGroup* gradient() const {
    if (cp_size == 1) return data_parallel();
    return dp_cp ? dp_cp.get() : world;
  }
};

// Makes this rank's groups (every rank of `world` calls it). Throws UsageError naming
// --tensor-model-parallel-size and --context-parallel-size when their product does not divide the
// world size, and --expert-model-parallel-size when it does not divide the data-parallel size or
// is combined with tensor or context parallelism.
ParallelGroups make_parallel_groups(ProcessGroup* world, int tp_size, int cp_size = 1,
                                    int ep_size = 1);

}  // namespace vime::dist
