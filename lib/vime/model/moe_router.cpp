#include "vime/model/moe_router.hpp"

#include <ATen/ATen.h>

#include <string>
#include <tuple>

#include "vime/error.hpp"

namespace vime {
namespace {

void check_forced(const at::Tensor& forced, int64_t tokens, int64_t k) {
  if (forced.dim() != 2 || forced.size(0) != tokens || forced.size(1) != k) {
    throw Error("routing replay: expected expert indices of shape [" + std::to_string(tokens) +
                ", " + std::to_string(k) + "], got " + c10::str(forced.sizes()));
  }
}

// scores_for_choice [tokens, experts] with the experts outside each token's topk_group best groups
// set to 0 (HF's masked_fill; Megatron fills -inf, which picks the same experts unless a biased
// score is negative).
at::Tensor limit_to_groups(const at::Tensor& scores_for_choice, const MoeConfig& config) {
  const int64_t tokens = scores_for_choice.size(0), experts = scores_for_choice.size(1);
  const int64_t groups = config.n_group;
  auto grouped = scores_for_choice.view({tokens, groups, experts / groups});
  auto group_scores = std::get<0>(grouped.topk(2, -1)).sum(-1);  // [tokens, groups]
  auto group_idx = std::get<1>(at::topk(group_scores, config.topk_group, -1));
  auto group_mask = at::zeros_like(group_scores).scatter_(1, group_idx, 1.0);
  auto score_mask =
      group_mask.unsqueeze(-1).expand({tokens, groups, experts / groups}).reshape({tokens, -1});
  return scores_for_choice.masked_fill(score_mask.logical_not(), 0.0);
}

MoeRoute route_sigmoid(const at::Tensor& h, const at::Tensor& router, const at::Tensor& expert_bias,
                       const MoeConfig& config, const at::Tensor& forced_indices) {
  const int64_t tokens = h.size(0), k = config.num_experts_per_tok;
  MoeRoute route;
  auto logits = at::linear(h.to(at::kFloat), router.to(at::kFloat));  // [tokens, experts] fp32
  auto scores = at::sigmoid(logits);
  if (forced_indices.defined()) {
    check_forced(forced_indices, tokens, k);
    route.indices = forced_indices.to(h.device(), at::kLong);
  } else {
    // The choice takes no gradient (HF and Megatron gather the weights from the unbiased scores).
    auto choice = scores.detach();
    if (expert_bias.defined()) choice = choice + expert_bias.to(at::kFloat);
    if (config.n_group > 1) choice = limit_to_groups(choice, config);
    route.indices = std::get<1>(at::topk(choice, k, -1));
  }
  route.weights = scores.gather(1, route.indices);
  if (config.norm_topk_prob) {
    route.weights = route.weights / (route.weights.sum(-1, /*keepdim=*/true) + 1e-20);
  }
  if (config.routed_scaling_factor != 1.0) {
    route.weights = route.weights * config.routed_scaling_factor;
  }
  route.probs = scores / (scores.sum(-1, /*keepdim=*/true) + 1e-20);
  return route;
}

}  // namespace

MoeRoute route_tokens(const at::Tensor& h, const at::Tensor& router, const at::Tensor& expert_bias,
                      const MoeConfig& config, const at::Tensor& forced_indices) {
  if (config.score_function == "sigmoid") {
    return route_sigmoid(h, router, expert_bias, config, forced_indices);
  }
  const int64_t tokens = h.size(0), k = config.num_experts_per_tok;
  MoeRoute route;
  auto logits = at::linear(h, router);  // [tokens, experts], h's dtype
  route.probs = at::softmax(logits, -1, at::kFloat);
  if (forced_indices.defined()) {
    check_forced(forced_indices, tokens, k);
    route.indices = forced_indices.to(h.device(), at::kLong);
    route.weights = route.probs.gather(1, route.indices);
  } else {
    std::tie(route.weights, route.indices) = at::topk(route.probs, k, -1);
  }
  if (config.norm_topk_prob) route.weights = route.weights / route.weights.sum(-1, true);
  if (config.routed_scaling_factor != 1.0) {
    route.weights = route.weights * config.routed_scaling_factor;
  }
  route.weights = route.weights.to(h.scalar_type());
  return route;
}

at::Tensor load_balancing_loss(const MoeRoute& route, const at::Tensor& counts) {
  const int64_t tokens = route.probs.size(0), experts = route.probs.size(1),
                k = route.indices.size(1);
  if (tokens == 0) return route.probs.sum();
  return (route.probs.sum(0) * counts.to(at::kFloat)).sum() *
         (static_cast<double>(experts) /
          (static_cast<double>(k) * static_cast<double>(tokens * tokens)));
}

}  // namespace vime
