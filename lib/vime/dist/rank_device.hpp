// The device a rank trains on: cuda:<local rank> when CUDA is available (made the current CUDA
// device, so every tensor made without an index lands there too), else the CPU.
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/dist/rank_env.hpp"

namespace vime::dist {

// Throws UsageError when the node has fewer visible GPUs than local ranks.
at::Device bind_rank_device(const RankEnv& env);

// The current device: cuda:<current index> with CUDA, else the CPU.
at::Device current_device();

}  // namespace vime::dist
