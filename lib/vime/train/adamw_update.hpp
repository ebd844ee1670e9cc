// One AdamW update (decoupled weight decay, bias-corrected moments) over a list of fp32 tensors:
// on CUDA with LibTorch 2.x one multi-tensor kernel (at::_fused_adamw_), elsewhere plain ATen ops
// per tensor. The two give the same values up to fp32 rounding.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime::train {

struct AdamWTensors {
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs;  // fp32, index-aligned
};

struct AdamWHyper {
  double lr = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  double grad_scale = 1.0;  // grads are multiplied by this first (gradient clipping)
  int64_t step = 1;         // the step being taken, from 1
};

void adamw_update(const AdamWTensors& t, const AdamWHyper& h);

}  // namespace vime::train
