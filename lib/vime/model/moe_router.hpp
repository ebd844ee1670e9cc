// The router of an MoE layer: each token's scores over the experts -> its top-k experts and their
// weights, and what Megatron's switch_load_balancing_loss_func needs of them. Two families:
// softmax routing (HF's Qwen3MoeSparseMoeBlock / Qwen2MoeSparseMoeBlock) and sigmoid routing
// (HF's DeepseekV3MoE / Glm4MoeMoE route_tokens_to_experts, Megatron's --moe-router-score-function
// sigmoid): fp32 sigmoid scores, a per-expert correction bias added for choosing only,
// group-limited top-k, renormalisation and a routed scaling factor.
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/model/model_config.hpp"

namespace vime {

struct MoeRoute {
  at::Tensor indices;  // [tokens, k] int64, the chosen experts
  // [tokens, k]: in h's dtype under softmax routing; fp32 under sigmoid routing (HF multiplies
  // the experts' outputs by them in fp32 and rounds the product).
  at::Tensor weights;
  // [tokens, experts] fp32: each token's probabilities over all experts (the aux loss's p_te;
  // the sigmoid scores normalised to sum to 1 under sigmoid routing, as Megatron's
  // compute_routing_scores_for_aux_loss takes them).
  at::Tensor probs;
};

// h: [tokens, hidden]; router: [experts, hidden] (what the caller's tensor parallelism made of
// mlp.gate.weight); expert_bias: [experts] fp32 (mlp.gate.e_score_correction_bias) or undefined.
// Softmax: the logits in h's dtype, the softmax in fp32, top-k, renormalised when
// config.norm_topk_prob, scaled by config.routed_scaling_factor, cast to h's dtype. Sigmoid: the
// logits and scores in fp32; experts chosen by score + bias, among the config.topk_group groups
// (of config.n_group) whose two best biased scores sum highest (the other groups' experts masked
// to 0, as HF does); weights are the chosen experts' unbiased scores, divided by their sum + 1e-20
// when config.norm_topk_prob, times config.routed_scaling_factor. `forced_indices` [tokens, k]
// (routing replay) replaces the choice; the weights are taken for those experts.
MoeRoute route_tokens(const at::Tensor& h, const at::Tensor& router, const at::Tensor& expert_bias,
                      const MoeConfig& config, const at::Tensor& forced_indices = {});

// Megatron's switch_load_balancing_loss_func with coefficient 1 (a scalar fp32 with a gradient to
// the router): num_experts / (k * tokens^2) * sum_e (sum_t p_te) * tokens_e. `counts`: [experts],
// the rows routed to each expert.
at::Tensor load_balancing_loss(const MoeRoute& route, const at::Tensor& counts);

}  // namespace vime
