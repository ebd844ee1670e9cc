// The engine's decode step over the paged KV cache with fixed shapes: one new token per row, every
// input a device tensor of the batch's (padded) size, no host sync. On CUDA it runs vime's own
// kernels (paged_decode_kernel.hpp), so a CUDA graph can capture the whole forward; elsewhere, or
// for shapes the kernels lack, the same attention in ATen over the gathered block tables.
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/model/model.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime {

// How the CUDA decode kernel runs (paged_decode_kernel.hpp); 0 leaves the choice to it.
struct PagedDecodeKernel {
  int64_t kv_splits = 0;           // split-K: 0 picks by the launch's size, 1 is off
  int64_t lanes_per_position = 0;  // 32 (a warp per K/V position) or 16 (two per warp)
};

// All int32 on the cache's device; row b is a padding row when slots[b] < 0 (its K/V are not
// written, context_lens[b] = 0, its logits are garbage).
struct PagedDecodeInputs {
  at::Tensor tokens;        // [batch]
  at::Tensor positions;     // [batch]: the new token's position
  at::Tensor slots;         // [batch]: where its K/V go (PagedKvCache's slot numbering)
  at::Tensor context_lens;  // [batch]: positions + 1 (0 for padding)
  at::Tensor block_tables;  // [batch, max_blocks]
  PagedDecodeKernel kernel;
};

// Whether vime's CUDA decode kernel serves q [*, heads, head_dim] of this dtype and device against
// caches of kv_heads heads (a CUDA build of vime, a CUDA tensor, head_dim 64/128, heads / kv_heads
// at most 8).
bool paged_decode_kernel_available(const at::Tensor& q, int64_t kv_heads);

// q: [batch, heads, head_dim]; caches [num_blocks, block_size, kv_heads, head_dim]. Returns
// [batch, heads, head_dim] in q's dtype; rows with context length 0 are zeros. kernel.kv_splits:
// the CUDA kernel's split-K (each row's context over up to that many CTAs per kv head, merged
// after; 0: chosen from batch x kv heads against the SMs and the block tables' length; 1: one CTA
// per (row, kv head)). The fixed shapes keep it capturable: only lengths change between replays.
at::Tensor paged_decode_attention(const at::Tensor& q, const at::Tensor& key_cache,
                                  const at::Tensor& value_cache, const at::Tensor& block_tables,
                                  const at::Tensor& context_lens, double scale,
                                  const PagedDecodeKernel& kernel = {});
// The same in ATen (fp32 math over each row's whole block table, masked): the CPU path and the
// kernel's reference.
at::Tensor paged_decode_attention_reference(const at::Tensor& q, const at::Tensor& key_cache,
                                            const at::Tensor& value_cache,
                                            const at::Tensor& block_tables,
                                            const at::Tensor& context_lens, double scale);

// k, v: [batch, kv_heads, head_dim] into their slots; negative slots are skipped.
void write_paged_kv(const at::Tensor& key_cache, const at::Tensor& value_cache, const at::Tensor& k,
                    const at::Tensor& v, const at::Tensor& slots);

// The model's forward for one decode step. Returns [batch, vocab_size] logits in the model dtype.
// Call under no-grad.
at::Tensor paged_decode_forward(Model& model, PagedKvCache& cache, const PagedDecodeInputs& in);

}  // namespace vime
