// Attention of new tokens over the engine's paged KV cache (PagedKvCache): through a block table
// where this LibTorch's flash attention takes one, else by gathering each sequence's blocks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime {

// Attention of new tokens over a paged KV cache (the engine's step): sequence b has new tokens
// cu_seqlens_q[b] .. cu_seqlens_q[b+1] of q, the last of a context of seqlens_k[b] positions whose
// K/V (the new ones included) are already in the cache; query i of b attends positions
// [0, seqlens_k[b] - n_b + i] (causal, aligned at the end).
struct PagedAttentionInfo {
  std::vector<int64_t> cu_seqlens_q;  // [num_seqs + 1], host
  std::vector<int64_t> seqlens_k;     // [num_seqs], host
  at::Tensor cu_seqlens_q_device;     // int32, on the cache's device
  at::Tensor cu_seqlens_k_device;     // int32
  at::Tensor block_tables;            // [num_seqs, max_blocks] int32 (unused entries: 0)
  at::Tensor gather_slots;            // [sum seqlens_k] int64: each sequence's slots, packed
  int64_t max_seqlen_q = 0, max_seqlen_k = 0;
};

enum class PagedAttentionPath {
  kAuto,  // flash over the block table where the LibTorch takes one (CUDA, blocks of 256n),
          // else kGather
  // The CPU path, and the reference on CUDA: gather each sequence's K/V out of the blocks, then
  // math attention (CPU) or flash varlen (CUDA).
  kGather,
};

// q: [total_new_tokens, heads, head_dim]; key_cache, value_cache: [num_blocks, block_size,
// kv_heads, head_dim]. Returns [total_new_tokens, heads, head_dim]. No autograd.
at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& key_cache,
                           const at::Tensor& value_cache, const PagedAttentionInfo& info,
                           double scale, PagedAttentionPath path = PagedAttentionPath::kAuto);

// Whether this LibTorch's flash attention reads a block table (at::_flash_attention_forward's
// block_table argument) for caches of `block_size`-token blocks.
bool flash_block_table_available(int64_t block_size);

}  // namespace vime
