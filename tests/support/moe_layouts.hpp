// MoE checkpoints in the expert layouts vime reads, built from the Hub's one-tensor-per-expert
// form.
#pragma once

#include <vector>

#include "vime/ckpt/safetensors.hpp"

namespace vime::test {

// `hub` with the experts of `layers` (each holding `experts` experts) stacked as transformers 5
// holds them: mlp.experts.gate_up_proj [E, 2F, H] (gate rows first) and mlp.experts.down_proj [E,
// H, F].
ckpt::NamedTensors fuse_experts_like_transformers5(const ckpt::NamedTensors& hub,
                                                   const std::vector<int>& layers, int experts);

}  // namespace vime::test
