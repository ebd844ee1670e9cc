// Megatron's expert parallelism (--expert-model-parallel-size N, the alltoall token dispatcher):
// the ranks of an expert-parallel group, which lies inside the data-parallel group, each hold
// num_experts / N consecutive experts of every MoE layer (rank r: experts [r * E/N, (r+1) * E/N)).
// The router stays replicated; after routing, each rank sends its (token, expert) rows to the
// ranks owning their experts (all-to-all with variable splits), runs its local experts' grouped
// GEMMs on what it received, and sends the outputs back (the reverse all-to-all), where they are
// weighted and summed as without expert parallelism. Backward runs the same exchanges reversed.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace vime::dist {
class ProcessGroup;
}

namespace vime {

struct ModelConfig;

// This rank's place in its expert-parallel group; size 1 (no group): every rank holds all experts.
struct ExpertParallel {
  dist::ProcessGroup* group = nullptr;
  int rank = 0;
  int size = 1;
  // Megatron's expert-data-parallel group: the ranks holding the same experts (data-parallel size
  // / N of them), over which the experts' gradients are summed; null when this rank is alone.
  dist::ProcessGroup* data_parallel = nullptr;

  // null or a group of one: none.
  static ExpertParallel over(dist::ProcessGroup* group, dist::ProcessGroup* data_parallel);
  bool is_parallel() const { return size > 1; }
};

// Throws UsageError naming --expert-model-parallel-size when `ep_size` > 1 and the model has no
// experts, or its experts do not split evenly over `ep_size` ranks.
void check_expert_parallel_shape(const ModelConfig& config, int ep_size);

// The expert MLPs of this rank's experts over rows grouped by local expert: `rows` [n, hidden],
// `ends` [local experts] int32, the end row of each expert's segment (grouped_linear's offsets).
using LocalExperts = std::function<at::Tensor(const at::Tensor& rows, const at::Tensor& ends)>;

// x: [n, hidden], this rank's (token, expert) rows sorted by expert over all the model's experts;
// counts: [num_experts] int64, the rows of each expert. Dispatches the rows to the ranks owning
// their experts, runs `local` there and combines: returns [n, out] in x's row order. A collective
// over ep.group (every rank calls it once per MoE layer, in the same order); differentiable.
at::Tensor run_on_expert_owners(const at::Tensor& x, const at::Tensor& counts,
                                const ExpertParallel& ep, const LocalExperts& local);

}  // namespace vime
