// A context-parallel layout (model/context_parallel.hpp) in an autograd node's saved data: the
// attention part of it, kept by value, since a node's backward (the attention's, activation
// recompute's) may run after the batch that made the layout is gone.
#pragma once

#include <torch/csrc/autograd/custom_function.h>

#include "vime/model/context_parallel.hpp"

namespace vime {

void save_cp_layout(torch::autograd::AutogradContext* ctx, const CpLayout& layout);
CpLayout restore_cp_layout(torch::autograd::AutogradContext* ctx);

}  // namespace vime
