// Megatron's context parallelism (CP) for the training forward: the ranks of a context-parallel
// group share every sample of a packed batch along the sequence. Each sample is padded to a
// multiple of 2N tokens (N = group size) and cut into 2N equal chunks; rank r holds chunks r and
// 2N-1-r (Megatron's causal load balance, slime's slice_with_cp), with their original positions
// (RoPE). Attention gathers the keys and values of every rank (Megatron's cp_comm_type
// all_gather) and runs each local chunk's queries against its sample's keys up to the chunk's end.
// All-gather rather than a ring: one collective per layer and one attention call per chunk make it
// exact (the same sums as one rank) and simple to differentiate; a ring's per-step softmax merging
// would add rounding and a second kernel path. Per-token outputs come back whole through
// gather_rows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "vime/model/attention.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime {

struct PackedBatch;

// This rank's place in its context-parallel group; size 1 (no group): no context parallelism.
struct ContextParallel {
  dist::ProcessGroup* group = nullptr;
  int rank = 0;
  int size = 1;

  static ContextParallel over(dist::ProcessGroup* group);  // null or a group of one: none
  bool is_parallel() const { return size > 1; }
};

// How one rank's shard of a packed batch maps onto the whole batch.
struct CpLayout {
  dist::ProcessGroup* group = nullptr;
  int size = 1;
  // Attention: one query sequence per local chunk (two per sample), and for each the keys it sees,
  // its sample's rows [0, chunk end); key_rows picks them from the all-gathered local K/V
  // ([size x local tokens] rows, rank-major).
  VarlenInfo queries, keys;
  at::Tensor key_rows;  // [Σ keys] int64 on the model's device
  // Each local row's row in the whole batch; -1 for padding.
  std::vector<int64_t> global_rows;
  int64_t num_global_rows = 0;
};

// This rank's shard of `full` (packed as PackedBatch::pack packs it): the tokens of its two chunks
// of every sample (padding token 0 past a sample's end), their original positions, and the layout
// (batch.context_parallel). Every rank of the group gets the same number of local tokens.
PackedBatch shard_for_context_parallel(const PackedBatch& full, const ContextParallel& cp);

// Causal attention of the local rows of `layout`'s shard: q [local, heads, D], k, v [local,
// kv_heads, D]. Differentiable; the K/V gradients of every rank's queries are reduce-scattered
// back to the ranks that hold those rows. Saves only the local q, k, v (the whole sequence's K/V
// are not kept from forward to backward): backward gathers K/V again and differentiates the
// attention recomputed.
at::Tensor context_parallel_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const CpLayout& layout, double scale,
                                      AttentionBackend backend);

// The whole [num_rows, ...] tensor from every rank's rows: row dest[i] of the result is x[i] of the
// rank that holds it (each row held by exactly one rank; the ranks' parts summed over the group).
// Every rank gets the same tensor and is expected to compute the same loss from it, so backward
// gives each rank the gradient of its own rows (no collective). `dest`: [x.size(0)] int64 on x's
// device.
at::Tensor gather_rows(const at::Tensor& x, const at::Tensor& dest, int64_t num_rows,
                       dist::ProcessGroup* group);

}  // namespace vime
