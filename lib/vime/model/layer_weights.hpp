// One decoder layer's tensors and its math with the attention left to the caller, shared by the
// training forward (varlen attention over packed sequences, model.cpp) and the engine's paged
// forward (attention against the paged KV cache, paged_forward.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <functional>

#include "vime/model/layers.hpp"
#include "vime/model/lora.hpp"
#include "vime/model/mla.hpp"
#include "vime/model/model_config.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace vime {

// The tensors of one decoder layer (views of Model's parameters, or recompute's fresh leaves).
struct LayerWeights {
  at::Tensor input_norm;              // [hidden]
  at::Tensor q_weight, q_bias;        // [heads*head_dim, hidden], [heads*head_dim] (MLA: q_proj)
  at::Tensor k_weight, k_bias;        // [kv_heads*head_dim, hidden], [kv_heads*head_dim]
  at::Tensor v_weight, v_bias;        // like k
  at::Tensor o_weight;                // [hidden, heads*head_dim] (MLA: heads*v_head_dim)
  at::Tensor q_norm, k_norm;          // [head_dim] (Qwen3)
  at::Tensor post_norm;               // [hidden]
  at::Tensor gate_weight, up_weight;  // [ffn, hidden]
  at::Tensor down_weight;             // [hidden, ffn]
  LayerLora lora;                     // adapters on the linears (none unless Model::add_lora)
  MoeWeights moe;                     // MoE layers: the routed experts instead of gate/up/down
  MlaWeights mla;                     // multi-head latent attention instead of k/v (and q)
  // GLM-4: norms on the attention's and the MLP's outputs ([hidden]; post_self_attn_layernorm,
  // post_mlp_layernorm).
  at::Tensor post_attn_out_norm, post_mlp_out_norm;

  static constexpr size_t kNumSlots = 31;
  std::array<at::Tensor*, kNumSlots> slots() {
    return {&input_norm,
            &q_weight,
            &q_bias,
            &k_weight,
            &k_bias,
            &v_weight,
            &v_bias,
            &o_weight,
            &q_norm,
            &k_norm,
            &post_norm,
            &gate_weight,
            &up_weight,
            &down_weight,
            &moe.router,
            &moe.gate,
            &moe.up,
            &moe.down,
            &moe.shared_gate,
            &moe.shared_up,
            &moe.shared_down,
            &moe.shared_expert_gate,
            &moe.expert_bias,
            &post_attn_out_norm,
            &post_mlp_out_norm,
            &mla.q_a,
            &mla.q_a_norm,
            &mla.q_b,
            &mla.kv_a,
            &mla.kv_a_norm,
            &mla.kv_b};
  }
};

// q: [tokens, heads, head_dim]; k, v: [tokens, kv_heads, head_dim], after q/k norm and RoPE.
// Returns [tokens, heads, head_dim].
using AttentionFn =
    std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)>;

// Tensor parallelism inside a layer: the group, and this rank's KV-head slice (whose weights'
// gradients are summed over the ranks replicating the head).
struct LayerParallel {
  TensorParallel tp;
  TpSlice kv;
};

// x: [tokens, hidden] -> [tokens, hidden]; rope: the tables of x's positions. With `parallel`,
// the weights are this rank's tensor-parallel shards (q/k/v hold its heads) and x is replicated.
// An MLA layer (config.is_mla()) runs `mla_attend` on its latent inputs where given, else expands
// them per head (mla_expanded_attention) into `attend` (q and k of qk_head_dim, v padded to it).
at::Tensor decoder_layer(const LayerWeights& w, const at::Tensor& x, const ModelConfig& config,
                         const RopeTables& rope, const AttentionFn& attend,
                         const LayerParallel* parallel = nullptr,
                         const MlaAttentionFn* mla_attend = nullptr);

}  // namespace vime
