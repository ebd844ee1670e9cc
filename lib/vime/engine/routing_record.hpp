// The engine's record of a forward's expert routing (--use-rollout-routing-replay): the top-k
// experts each MoE layer chose (MoeRouting::chosen, in layer order) laid out per position over
// every decoder layer, as the engine returns them (GenerateResponse::routed_experts).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/model/model_config.hpp"

namespace vime::engine {

// [tokens, num_layers, topk] int32 on the chosen tensors' device: layer l's row is its MoE
// layer's choice, 0 for a dense layer. Runs no host read (a CUDA graph captures it).
at::Tensor routing_rows(const ModelConfig& config, const std::vector<at::Tensor>& chosen,
                        int64_t tokens, const at::Device& device);

// num_layers * topk: the ids per position (0 for a dense model).
int64_t routing_row_width(const ModelConfig& config);

}  // namespace vime::engine
