// Checkpoint layouts that differ between the Hub and vime's parameters, for the dense MLP (the MoE
// experts' per-expert names are in moe.hpp).
#pragma once

#include "vime/model/model.hpp"
#include "vime/model/model_config.hpp"

namespace vime {

// GLM-4's fused dense MLP input (mlp.gate_up_proj.weight, gate rows first) as vime's
// mlp.gate_proj.weight and mlp.up_proj.weight (views); other tensors unchanged.
NamedTensorList split_fused_gate_up(const NamedTensorList& tensors);
// Tensors named as `config`'s HF checkpoint holds them: a GLM-4 model's gate and up projections
// fused into mlp.gate_up_proj.weight; the others unchanged.
NamedTensorList hub_layout(NamedTensorList tensors, const ModelConfig& config);

}  // namespace vime
