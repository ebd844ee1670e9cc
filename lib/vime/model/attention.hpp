// Causal self-attention over a packed batch of variable-length sequences (the "thd" layout):
// sequence i owns rows cu_seqlens[i] .. cu_seqlens[i+1] and attends only to itself. GQA: each key/
// value head serves num_heads / num_kv_heads query heads.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime {

struct VarlenInfo {
  std::vector<int64_t> cu_seqlens;  // [num_seqs + 1], starts at 0
  at::Tensor cu_seqlens_device;     // [num_seqs + 1] int32 on the model's device (flash path)
  int64_t max_seqlen = 0;
};

enum class AttentionBackend {
  kAuto,   // flash varlen on CUDA (bf16/fp16) when the LibTorch has it, else kMath
  kMath,   // per sequence: q·kᵀ, causal mask, softmax in fp32, ·v (any device, any dtype)
  kFlash,  // at::_flash_attention_forward/_backward (CUDA, 2.1+); throws elsewhere
};

// q: [total_tokens, num_heads, head_dim]; k, v: [total_tokens, num_kv_heads, head_dim].
// Returns [total_tokens, num_heads, head_dim]. Differentiable.
at::Tensor varlen_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const VarlenInfo& info, double scale,
                                   AttentionBackend backend = AttentionBackend::kAuto);

// Queries and keys in layouts of their own: sequence i has the q_info rows of q and the k_info
// rows of k / v (same number of sequences), and its queries are the last rows of its keys: query
// j of Lq sees keys [0, Lk - Lq + j] (the causal mask aligned at the bottom right, as flash-attn
// 2.1+ aligns it when Lq < Lk). Context parallelism calls it with a chunk's queries against every
// key up to the chunk's end.
at::Tensor varlen_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const VarlenInfo& q_info, const VarlenInfo& k_info, double scale,
                                   AttentionBackend backend);

bool flash_attention_available(const at::Tensor& q);

}  // namespace vime
