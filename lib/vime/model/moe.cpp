#include "vime/model/moe.hpp"

#include <ATen/ATen.h>

#include <cctype>
#include <tuple>

#include "vime/error.hpp"
#include "vime/model/grouped_gemm.hpp"
#include "vime/model/layers.hpp"
#include "vime/model/moe_router.hpp"

namespace vime {
namespace {

thread_local MoeRouting* current_routing = nullptr;

const char* const kStackedSuffixes[] = {".mlp.experts.gate_proj", ".mlp.experts.up_proj",
                                        ".mlp.experts.down_proj"};

}  // namespace

MoeOutput moe_block(const MoeWeights& w, const at::Tensor& h, const MoeConfig& config,
                    const TensorParallel& tp, const at::Tensor& forced_indices) {
  const int64_t tokens = h.size(0), k = config.num_experts_per_tok, experts = w.router.size(0);
  // The router is replicated but its gradient from this rank's slice of the experts is partial:
  // summed over the group by copy_to_tp (so is the shared expert's gate).
  MoeRoute route = route_tokens(h, copy_to_tp(w.router, tp), w.expert_bias, config, forced_indices);
  const at::Tensor &indices = route.indices, &weights = route.weights;

  // Each token's experts in ascending order (HF sums them so), then every (token, expert) row
  // sorted by expert, stably: the tokens of one expert stay in order.
  auto [ascending, order] = at::sort(indices, /*dim=*/1);
  auto flat_experts = ascending.reshape({-1});                 // [tokens * k]
  auto flat_weights = weights.gather(1, order).reshape({-1});  // [tokens * k]
  auto permutation = std::get<1>(at::sort(flat_experts, /*stable=*/true, 0, false));
  auto rows_token = at::div(permutation, k, "trunc");
  auto counts = at::zeros({experts}, flat_experts.options())
                    .scatter_add_(0, flat_experts, at::ones_like(flat_experts));
  auto offsets = counts.cumsum(0).to(at::kInt);

  auto x = h.index_select(0, rows_token);  // [tokens * k, hidden], grouped by expert
  auto gate = grouped_linear(x, w.gate, offsets), up = grouped_linear(x, w.up, offsets);
  auto y = grouped_linear(swiglu(gate, up), w.down, offsets);
  y = (y * flat_weights.index_select(0, permutation).unsqueeze(1)).to(h.scalar_type());
  // Back to (token, slot) order: row r of y is flat position permutation[r].
  auto inverse =
      at::empty_like(permutation)
          .scatter_(0, permutation, at::arange(permutation.numel(), permutation.options()));
  auto per_slot = y.index_select(0, inverse).view({tokens, k, -1});
  auto out = per_slot.select(1, 0);
  for (int64_t j = 1; j < k; ++j) out = out + per_slot.select(1, j);

  if (w.shared_gate.defined()) {
    auto shared = swiglu_mlp(h, w.shared_gate, w.shared_up, w.shared_down);
    if (w.shared_expert_gate.defined()) {
      shared = at::sigmoid(at::linear(h, copy_to_tp(w.shared_expert_gate, tp))) * shared;
    }
    out = out + shared;
  }

  auto aux = load_balancing_loss(route, counts);
  if (tp.is_parallel()) {
    // Every rank computes the whole loss from replicated values; its gradient reaches the
    // replicated router through copy_to_tp's sum, so each rank contributes 1/tp of it.
    aux = aux / tp.size + (aux - aux / tp.size).detach();
  }
  return {out, indices.detach(), aux};
}

MoeRoutingScope::MoeRoutingScope(MoeRouting* routing) : previous_(current_routing) {
  current_routing = routing;
}

MoeRoutingScope::~MoeRoutingScope() { current_routing = previous_; }

MoeRouting* current_moe_routing() { return current_routing; }

at::Tensor moe_mlp(const MoeWeights& w, const at::Tensor& h, const MoeConfig& config,
                   const TensorParallel& tp) {
  MoeRouting* routing = current_routing;
  if (routing == nullptr) return moe_block(w, h, config, tp).out;
  const size_t layer = routing->next_layer++;
  at::Tensor forced;
  if (!routing->replay.empty()) {
    if (layer >= routing->replay.size()) {
      throw Error("routing replay: " + std::to_string(routing->replay.size()) +
                  " layers of expert choices recorded, the model has more MoE layers");
    }
    forced = routing->replay[layer];
  }
  auto result = moe_block(w, h, config, tp, forced);
  routing->chosen.push_back(result.expert_indices);
  routing->aux_losses.push_back(result.aux_loss);
  return result.out;
}

bool is_expert_bias(const std::string& name) {
  return name.ends_with(".mlp.gate.e_score_correction_bias");
}

bool moe_block_is_capturable(const MoeWeights& w) {
  auto fused = [](const at::Tensor& weight) {
    return grouped_linear_is_fused(at::empty({1, weight.size(2)}, weight.options()), weight);
  };
  return fused(w.gate) && fused(w.up) && fused(w.down);
}

std::optional<std::pair<std::string, int64_t>> stacked_expert_of(const std::string& hf_name) {
  // <prefix>.mlp.experts.<J>.<gate|up|down>_proj.weight
  static const std::string kExperts = ".mlp.experts.", kWeight = ".weight";
  const size_t at_experts = hf_name.find(kExperts);
  if (at_experts == std::string::npos || !hf_name.ends_with(kWeight)) return std::nullopt;
  const size_t digits = at_experts + kExperts.size();
  size_t end = digits;
  while (end < hf_name.size() && std::isdigit(static_cast<unsigned char>(hf_name[end]))) ++end;
  if (end == digits || end >= hf_name.size() || hf_name[end] != '.') return std::nullopt;
  const std::string proj = hf_name.substr(end + 1, hf_name.size() - kWeight.size() - end - 1);
  if (proj != "gate_proj" && proj != "up_proj" && proj != "down_proj") return std::nullopt;
  return std::make_pair(hf_name.substr(0, digits) + proj,
                        std::stoll(hf_name.substr(digits, end - digits)));
}

std::string per_expert_name(const std::string& stacked_name, int64_t expert) {
  for (const char* suffix : kStackedSuffixes) {
    if (!stacked_name.ends_with(suffix)) continue;
    const size_t cut = stacked_name.rfind('.');
    return stacked_name.substr(0, cut + 1) + std::to_string(expert) + stacked_name.substr(cut) +
           ".weight";
  }
  return {};
}

}  // namespace vime
