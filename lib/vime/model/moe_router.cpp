#include "vime/model/moe_router.hpp"

#include <ATen/ATen.h>

#include <string>
#include <tuple>

#include "vime/error.hpp"

namespace vime {

MoeRoute route_tokens(const at::Tensor& h, const at::Tensor& router, const MoeConfig& config,
                      const at::Tensor& forced_indices) {
  const int64_t tokens = h.size(0), k = config.num_experts_per_tok;
  MoeRoute route;
  auto logits = at::linear(h, router);  // [tokens, experts], h's dtype
  route.probs = at::softmax(logits, -1, at::kFloat);
  if (forced_indices.defined()) {
    if (forced_indices.dim() != 2 || forced_indices.size(0) != tokens ||
        forced_indices.size(1) != k) {
      throw Error("routing replay: expected expert indices of shape [" + std::to_string(tokens) +
                  ", " + std::to_string(k) + "], got " + c10::str(forced_indices.sizes()));
    }
    route.indices = forced_indices.to(h.device(), at::kLong);
    route.weights = route.probs.gather(1, route.indices);
  } else {
    std::tie(route.weights, route.indices) = at::topk(route.probs, k, -1);
  }
  if (config.norm_topk_prob) route.weights = route.weights / route.weights.sum(-1, true);
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
