// Megatron-style tensor parallelism: which part of each HF-named parameter a tensor-parallel rank
// holds, and the autograd-correct collectives between the parallel layers (Megatron's conjugate
// f/g operators). Column-parallel: q/k/v projections (and their biases), gate and up; row-parallel:
// o_proj and down; vocab-parallel: the embedding and the output layer (rows of the padded
// vocabulary). MoE layers split every expert's FFN width (and the shared expert's) the same way;
// norms, the router and the shared expert's gate are replicated. With fewer key/value heads than
// ranks, each KV head is held by tp / num_key_value_heads consecutive ranks (as Megatron-LM and
// vLLM replicate them); their gradients are summed over the replicas so the copies stay equal.
// Multi-head latent attention splits q_proj / q_b_proj and kv_b_proj by heads (rows) and o_proj by
// heads (columns); q_a_proj, kv_a_proj_with_mqa and their norms are replicated.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vime::dist {
class ProcessGroup;
}

namespace vime {

struct ModelConfig;

// This rank's place in its tensor-parallel group; size 1 (no group): no tensor parallelism.
struct TensorParallel {
  dist::ProcessGroup* group = nullptr;
  int rank = 0;
  int size = 1;

  static TensorParallel over(dist::ProcessGroup* group);  // null or a group of one: none
  bool is_parallel() const { return size > 1; }
};

// Throws UsageError naming --tensor-model-parallel-size when the model's heads, KV heads or FFN
// do not split evenly over `tp_size` ranks.
void check_tensor_parallel_shape(const ModelConfig& config, int tp_size);

// The part of a full parameter (HF shape, padded vocabulary) one rank holds:
// full.narrow(dim, start, length), or all of it when dim < 0 (replicated).
struct TpSlice {
  int64_t dim = -1;
  int64_t start = 0;
  int64_t length = 0;
  // Another rank holds the same values (replicated tensors on ranks > 0, KV-head replicas after
  // the first): left out of the global grad norm so nothing is counted twice.
  bool is_duplicate = false;
  // KV heads replicated over ranks: this rank's head and the model's number of KV heads (the
  // gradient is summed over the ranks holding the same head).
  int64_t replica_index = 0;
  int64_t num_replica_slots = 0;
  // Expert parallelism (expert_parallel.hpp): this rank's experts (dim 0) of a stacked expert
  // tensor, the others on the `parts` ranks of `group`; null: the parts lie on the
  // tensor-parallel group.
  dist::ProcessGroup* group = nullptr;
  int64_t parts = 0;

  at::Tensor of(const at::Tensor& full) const {
    return dim < 0 ? full : full.narrow(dim, start, length);
  }
};
// The shape of the whole tensor whose `slice` a rank holds as `local`.
std::vector<int64_t> whole_shape(const at::Tensor& local, const TpSlice& slice, int tp_size);

// `name`: HF name; `config.padded_vocab_size` must already divide by tp.size.
TpSlice tp_slice(const std::string& name, const ModelConfig& config, const TensorParallel& tp);

// Megatron's f: identity forward, the gradient all-reduced (summed) over the group backward. At
// the input of column-parallel layers (and on replicated weights applied to sharded activations).
at::Tensor copy_to_tp(const at::Tensor& x, const TensorParallel& tp);
// Megatron's g: all-reduce (sum) forward, identity backward. At the output of row-parallel layers.
at::Tensor reduce_from_tp(const at::Tensor& x, const TensorParallel& tp);
// All-gather of the last dimension forward (rank order), this rank's slice of the gradient
// backward.
at::Tensor gather_from_tp(const at::Tensor& x, const TensorParallel& tp);
// Identity forward; backward, the gradient summed over the ranks whose slice.replica_index is the
// same (KV-head replicas). A no-op for a slice that is not replicated.
at::Tensor sum_over_replicas(const at::Tensor& x, const TpSlice& slice, const TensorParallel& tp);

// The full parameter from every rank's slice (a collective over the group, slice.group when set;
// every rank gets it).
at::Tensor gather_full(const at::Tensor& local, const TpSlice& slice, const TensorParallel& tp);

}  // namespace vime
