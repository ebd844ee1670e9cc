// The sparse MLP of Qwen3-MoE and Qwen2-MoE layers (HF's Qwen3MoeSparseMoeBlock /
// Qwen2MoeSparseMoeBlock, Megatron's MoELayer): a softmax router picks each token's top-k experts,
// tokens are permuted so that each expert's rows are contiguous, the experts' SwiGLU MLPs run as
// grouped GEMMs (grouped_gemm.hpp) over stacked weights, and the outputs come back scaled by the
// routing weights and summed per token. Qwen2-MoE adds a shared expert scaled by a sigmoid gate;
// DeepSeek-V3 and GLM-4.5 route by sigmoid scores (moe_router.hpp) and add ungated shared experts.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vime/model/model_config.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace vime {

// One MoE layer's tensors (views of Model's parameters). Under tensor parallelism each rank holds
// a slice of every expert's FFN width (gate/up rows, down columns) and of the shared expert's, as
// for the dense MLP; the router and the shared expert's gate are replicated.
struct MoeWeights {
  at::Tensor router;                  // [experts, hidden]            mlp.gate.weight
  at::Tensor gate, up;                // [experts, ffn, hidden]       mlp.experts.{gate,up}_proj
  at::Tensor down;                    // [experts, hidden, ffn]       mlp.experts.down_proj
  at::Tensor shared_gate, shared_up;  // [shared_ffn, hidden]         mlp.shared_expert(s).*
  at::Tensor shared_down;             // [hidden, shared_ffn]
  at::Tensor shared_expert_gate;      // [1, hidden]                  mlp.shared_expert_gate.weight
  // [experts] fp32, not trained: mlp.gate.e_score_correction_bias (sigmoid routing).
  at::Tensor expert_bias;

  bool defined() const { return router.defined(); }
};

struct MoeOutput {
  // [tokens, hidden]: this rank's partial sum under tensor parallelism (the caller all-reduces it,
  // as the dense MLP's down projection).
  at::Tensor out;
  at::Tensor expert_indices;  // [tokens, k] int64, the chosen experts in top-k order
  // Megatron's switch_load_balancing_loss_func with coefficient 1 (a scalar fp32 with a gradient
  // to the router): num_experts / (k * tokens^2) * sum_e (sum_t p_te) * tokens_e.
  at::Tensor aux_loss;
};

// h: [tokens, hidden], replicated over the tensor-parallel group. Routing as route_tokens
// (moe_router.hpp) computes it, or `forced_indices` [tokens, k] (routing replay). Each expert
// output is multiplied by its weight (fp32 under sigmoid routing) and rounded to h's dtype, and a
// token's expert outputs are summed in ascending expert order in h's dtype, as HF's index_add_
// loop over experts does; the shared expert's output (gated or not) is added last.
MoeOutput moe_block(const MoeWeights& w, const at::Tensor& h, const MoeConfig& config,
                    const TensorParallel& tp = {}, const at::Tensor& forced_indices = {});

// The routing of one forward, MoE layer by MoE layer in order: replayed choices in, the chosen
// experts and the load-balancing losses out. Installed for the current thread by MoeRoutingScope;
// moe_mlp consults it.
struct MoeRouting {
  std::vector<at::Tensor> replay;      // per MoE layer [tokens, k] int64; empty: route
  std::vector<at::Tensor> chosen;      // filled: per MoE layer [tokens, k] int64 (no gradient)
  std::vector<at::Tensor> aux_losses;  // filled: per MoE layer, as MoeOutput::aux_loss
  size_t next_layer = 0;
};

class MoeRoutingScope {
 public:
  explicit MoeRoutingScope(MoeRouting* routing);
  ~MoeRoutingScope();
  MoeRoutingScope(const MoeRoutingScope&) = delete;
  MoeRoutingScope& operator=(const MoeRoutingScope&) = delete;

 private:
  MoeRouting* previous_;
};

// The current thread's routing (null outside any MoeRoutingScope).
MoeRouting* current_moe_routing();

// moe_block with the current MoeRoutingScope's replay and records (none: route, record nothing);
// returns MoeOutput::out.
at::Tensor moe_mlp(const MoeWeights& w, const at::Tensor& h, const MoeConfig& config,
                   const TensorParallel& tp);

// Whether `name` is a router's correction bias (mlp.gate.e_score_correction_bias): a tensor of the
// checkpoint that is kept in fp32 and not trained.
bool is_expert_bias(const std::string& name);

// Whether moe_block runs without reading anything on the host (its grouped GEMMs are single
// kernels, grouped_gemm.hpp), so that a CUDA graph can capture it.
bool moe_block_is_capturable(const MoeWeights& w);

// HF's per-expert name of one expert's matrix and vime's stacked parameter holding it:
// "model.layers.3.mlp.experts.7.up_proj.weight" -> {"model.layers.3.mlp.experts.up_proj", 7}.
std::optional<std::pair<std::string, int64_t>> stacked_expert_of(const std::string& hf_name);
// The stacked parameter's per-expert HF name: ("model.layers.3.mlp.experts.up_proj", 7) ->
// "model.layers.3.mlp.experts.7.up_proj.weight". Empty when `name` is not a stacked expert tensor.
std::string per_expert_name(const std::string& stacked_name, int64_t expert);

}  // namespace vime
