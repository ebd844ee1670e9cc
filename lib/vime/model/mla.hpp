// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2, Moonlight; HF DeepseekV3Attention): the
// query through q_proj, or the low-rank q_a_proj -> q_a_layernorm -> q_b_proj; keys and values
// from one shared latent per token (kv_a_proj_with_mqa -> kv_a_layernorm, kv_lora_rank wide) that
// kv_b_proj expands per head into the no-RoPE key part and the value, plus one RoPE key part
// shared by all heads. RoPE turns only the qk_rope_head_dim part (DeepSeek's interleaved pairs,
// HF apply_rotary_pos_emb_interleave). Training and prefill expand the latent into per-head K/V;
// the engine may instead attend in latent space with the absorbed projections (the query's
// no-RoPE part times W_UK, the output times W_UV), so its cache holds the latent and the RoPE key
// only. Under tensor parallelism each rank holds its heads' rows of q_b/q_proj and kv_b_proj and
// columns of o_proj; q_a, kv_a and their norms are replicated.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "vime/model/layers.hpp"
#include "vime/model/model_config.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace vime {

// One layer's MLA tensors besides q_proj and o_proj (which are LayerWeights::q_weight/o_weight).
struct MlaWeights {
  at::Tensor q_a, q_a_norm, q_b;  // [q_lora_rank, hidden], [q_lora_rank], [heads*qk, q_lora]
  at::Tensor kv_a, kv_a_norm;     // [kv_lora_rank + rope, hidden], [kv_lora_rank]
  at::Tensor kv_b;                // [heads * (nope + v), kv_lora_rank]
};

// The per-token inputs of the attention, RoPE applied.
struct MlaQueryKv {
  at::Tensor q_nope;  // [T, heads, qk_nope_head_dim]
  at::Tensor q_rope;  // [T, heads, qk_rope_head_dim]
  at::Tensor latent;  // [T, kv_lora_rank], after kv_a_layernorm
  at::Tensor k_rope;  // [T, 1, qk_rope_head_dim]
};

// The attention of a layer given its MLA inputs and this rank's kv_b_proj rows; returns
// [T, heads, v_head_dim].
using MlaAttentionFn = std::function<at::Tensor(const MlaQueryKv& in, const at::Tensor& kv_b)>;

// h: [T, hidden] (the normalised layer input, replicated under tensor parallelism).
MlaQueryKv mla_project(const MlaWeights& w, const at::Tensor& q_weight, const at::Tensor& h,
                       const ModelConfig& config, const RopeTables& rope,
                       const TensorParallel& tp = {});

// q, k: [T, heads, qk_head_dim]; v: [T, heads, v_head_dim] (v zero-padded to qk_head_dim when
// they differ, as flash attention needs one head size; the padding is cut from the result).
using MlaExpandedFn =
    std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)>;
// The expanded attention: per-head keys [k_nope | k_rope] and values from kv_b_proj.
at::Tensor mla_expanded_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                                  const ModelConfig& config, const MlaExpandedFn& attend);

// The absorbed query [T, heads, kv_lora_rank + qk_rope_head_dim]: [q_nope · W_UK | q_rope], to
// score against the latent cache rows [latent | k_rope].
at::Tensor mla_absorbed_query(const MlaQueryKv& in, const at::Tensor& kv_b,
                              const ModelConfig& config);
// out_latent: [T, heads, kv_lora_rank] (the softmax over the latents) -> [T, heads, v_head_dim].
at::Tensor mla_absorbed_output(const at::Tensor& out_latent, const at::Tensor& kv_b,
                               const ModelConfig& config);

}  // namespace vime
