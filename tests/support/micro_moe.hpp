// A micro Qwen3-MoE config for the routing tests: micro_qwen3's shape (2 layers, hidden 32,
// vocabulary 40) with `experts` experts of which each token takes `topk`; and the routing of a
// full forward, as the engine lays it out.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdint>
#include <vector>

#include "common/model_presets.hpp"
#include "vime/engine/routing_record.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"

namespace vime::test {

inline ModelConfig micro_qwen3_moe(int64_t experts = 8, int64_t topk = 2,
                                   std::vector<int64_t> mlp_only_layers = {}) {
  auto c = presets::micro_qwen3();
  c.model_type = "qwen3_moe";
  c.moe.num_experts = experts;
  c.moe.num_experts_per_tok = topk;
  c.moe.moe_intermediate_size = 16;
  c.moe.norm_topk_prob = true;
  c.moe.mlp_only_layers = std::move(mlp_only_layers);
  return c;
}

// The experts of an uncached full forward over `tokens`, in the engine's layout: [tokens,
// num_layers, topk] int32 row-major, 0 for a dense layer.
inline std::vector<int32_t> full_forward_routing(Model& model, const std::vector<int32_t>& tokens) {
  at::NoGradGuard no_grad;
  MoeRouting routing;
  {
    MoeRoutingScope scope(&routing);
    (void)model.forward_hidden(
        PackedBatch::pack({std::vector<int64_t>(tokens.begin(), tokens.end())}, model.device()));
  }
  auto rows = engine::routing_rows(model.config(), routing.chosen,
                                   static_cast<int64_t>(tokens.size()), model.device())
                  .to(at::kCPU)
                  .contiguous();
  return {rows.data_ptr<int32_t>(), rows.data_ptr<int32_t>() + rows.numel()};
}

}  // namespace vime::test
