#include "vime/engine/routing_record.hpp"

#include <ATen/ATen.h>

#include "vime/error.hpp"

namespace vime::engine {

at::Tensor routing_rows(const ModelConfig& config, const std::vector<at::Tensor>& chosen,
                        int64_t tokens, const at::Device& device) {
  const int64_t k = config.moe.num_experts_per_tok;
  std::vector<at::Tensor> layers;
  size_t next = 0;
  for (int64_t l = 0; l < config.num_layers; ++l) {
    if (!config.is_moe_layer(l)) {
      layers.push_back(at::zeros({tokens, k}, at::TensorOptions().dtype(at::kInt).device(device)));
      continue;
    }
    if (next >= chosen.size())
      throw Error("engine: the forward routed " + std::to_string(chosen.size()) +
                  " MoE layers, fewer than the model has");
    layers.push_back(chosen[next++].to(at::kInt));
  }
  return at::stack(layers, 1);
}

int64_t routing_row_width(const ModelConfig& config) {
  return config.is_moe() ? config.num_layers * config.moe.num_experts_per_tok : 0;
}

}  // namespace vime::engine
