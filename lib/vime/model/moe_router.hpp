// The router of an MoE layer: each token's scores over the experts -> its top-k experts and their
// weights, as HF's Qwen3MoeSparseMoeBlock / Qwen2MoeSparseMoeBlock compute them (softmax), and
// what Megatron's switch_load_balancing_loss_func needs of them.
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/model/model_config.hpp"

namespace vime {

struct MoeRoute {
  at::Tensor indices;  // [tokens, k] int64, the chosen experts in top-k order
  at::Tensor weights;  // [tokens, k] in h's dtype
  // [tokens, experts] fp32: each token's probabilities over all experts (the aux loss's p_te).
  at::Tensor probs;
};

// h: [tokens, hidden]; router: [experts, hidden] (what the caller's tensor parallelism made of
// mlp.gate.weight). The logits are taken in h's dtype, the softmax in fp32; top-k (or
// `forced_indices` [tokens, k], routing replay), renormalised when config.norm_topk_prob; the
// weights are cast to h's dtype.
MoeRoute route_tokens(const at::Tensor& h, const at::Tensor& router, const MoeConfig& config,
                      const at::Tensor& forced_indices = {});

// Megatron's switch_load_balancing_loss_func with coefficient 1 (a scalar fp32 with a gradient to
// the router): num_experts / (k * tokens^2) * sum_e (sum_t p_te) * tokens_e. `counts`: [experts],
// the rows routed to each expert.
at::Tensor load_balancing_loss(const MoeRoute& route, const at::Tensor& counts);

}  // namespace vime
