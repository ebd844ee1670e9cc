#include "vime/train/adamw_update.hpp"

#include <ATen/ATen.h>

#include <cmath>

#include "vime/core/torch_compat.hpp"

namespace vime::train {
namespace {

void adamw_per_tensor(const AdamWTensors& t, const AdamWHyper& h) {
  const double bias1 = 1 - std::pow(h.beta1, static_cast<double>(h.step));
  const double bias2 = 1 - std::pow(h.beta2, static_cast<double>(h.step));
  for (size_t i = 0; i < t.params.size(); ++i) {
    auto grad = h.grad_scale == 1.0 ? t.grads[i] : t.grads[i] * h.grad_scale;
    t.exp_avgs[i].mul_(h.beta1).add_(grad, 1 - h.beta1);
    t.exp_avg_sqs[i].mul_(h.beta2).addcmul_(grad, grad, 1 - h.beta2);
    auto denom = (t.exp_avg_sqs[i] / bias2).sqrt_().add_(h.eps);
    if (h.weight_decay != 0) t.params[i].mul_(1 - h.lr * h.weight_decay);
    t.params[i].addcdiv_(t.exp_avgs[i], denom, -h.lr / bias1);
  }
}

}  // namespace

void adamw_update(const AdamWTensors& t, const AdamWHyper& h) {
  if (t.params.empty()) return;
#if VIME_HAS_FUSED_ADAMW
  if (t.params.front().is_cuda()) {
    // The kernel reads the (already advanced) step count from a tensor per parameter: one shared
    // tensor serves them all. It divides grads by grad_scale.
    auto step = at::full({}, static_cast<double>(h.step), t.params.front().options());
    std::vector<at::Tensor> steps(t.params.size(), step);
    std::optional<at::Tensor> inverse_scale;
    if (h.grad_scale != 1.0) inverse_scale = at::full({}, 1.0 / h.grad_scale, step.options());
    at::_fused_adamw_(t.params, t.grads, t.exp_avgs, t.exp_avg_sqs, {}, steps, h.lr, h.beta1,
                      h.beta2, h.weight_decay, h.eps, /*amsgrad=*/false, /*maximize=*/false,
                      inverse_scale, std::nullopt);
    return;
  }
#endif
  adamw_per_tensor(t, h);
}

}  // namespace vime::train
