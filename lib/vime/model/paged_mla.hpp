// Multi-head latent attention against the engine's latent KV cache (PagedKvCache::is_latent): a
// token's row is [latent (kv_lora_rank) | rotated RoPE key (qk_rope_head_dim)], shared by every
// head. Attention runs in latent space with the absorbed projections (mla.hpp): the absorbed query
// scores against whole rows, the softmax weighs their latent parts, and W_UV maps the result back
// to each head's values. Prefill chunks and decode steps take the same path; the ATen math here is
// what runs on CUDA too (vime's paged kernels serve head sizes 64/128, not a 576-wide latent row).
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/model/mla.hpp"
#include "vime/model/paged_attention.hpp"

namespace vime {

// [T, kv_lora_rank + qk_rope_head_dim]: the rows the cache keeps for `in`'s tokens.
at::Tensor mla_cache_rows(const MlaQueryKv& in);

// A paged step (paged_forward): writes the new rows to `slots` (int64, one per new token) of the
// layer's cache, attends each sequence's new tokens over its cached rows (PagedAttentionInfo's
// gather_slots, causal aligned at the end). Returns [T, heads, v_head_dim].
at::Tensor mla_paged_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                               const at::Tensor& cache, const at::Tensor& slots,
                               const PagedAttentionInfo& info, const ModelConfig& config);

// A decode step with fixed shapes (paged_decode_forward, CUDA-graph capturable): one new token per
// row, `slots` int32 (negative: a padding row, not written), context_lens and block_tables as
// PagedDecodeInputs holds them. Returns [batch, heads, v_head_dim].
at::Tensor mla_decode_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                                const at::Tensor& cache, const at::Tensor& slots,
                                const at::Tensor& block_tables, const at::Tensor& context_lens,
                                const ModelConfig& config);

}  // namespace vime
