#include "vime/serve/model_residency.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <vector>

#include "vime/core/torch_compat.hpp"
#include "vime/model/model.hpp"

// PyTorch's CUDA LibTorch (the GPU build): hand freed blocks back to the driver, so that another
// process (the colocated trainer) can use them. Debian's CPU LibTorch has no c10_cuda to link.
#if VIME_TORCH_AT_LEAST(2, 0) && defined(USE_C10D_NCCL)
#include <c10/cuda/CUDACachingAllocator.h>
#define VIME_SERVE_EMPTY_CUDA_CACHE 1
#endif

namespace vime::serve {

struct ModelResidency::Impl {
  explicit Impl(Model& m) : model(m) {}
  Model& model;
  std::vector<at::Tensor> host;              // kOffloaded: one per parameter
  std::vector<std::vector<int64_t>> shapes;  // kDiscarded: one per parameter
};

ModelResidency::ModelResidency(Model& model) : impl_(std::make_unique<Impl>(model)) {}
ModelResidency::~ModelResidency() = default;

namespace {

// Re-points `param` at an empty tensor of its dtype and device, freeing its storage.
void release(const at::Tensor& param) { param.set_(at::empty({0}, param.options())); }

// Returns the caching allocator's free blocks to the driver (the KV cache's too).
void return_device_memory(const Model& model) {
#ifdef VIME_SERVE_EMPTY_CUDA_CACHE
  if (model.device().is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)model;
#endif
}

}  // namespace

void ModelResidency::offload() {
  if (state_ != State::kResident) return;
  at::NoGradGuard no_grad;
  auto& host = impl_->host;
  host.clear();
  for (const auto& [name, param] : impl_->model.named_parameters()) {
    // A real copy even when the model is on the CPU, so that waking up is the same path.
    host.push_back(param.detach().to(param.options().device(at::kCPU), /*non_blocking=*/false,
                                     /*copy=*/true));
  }
  for (const auto& [name, param] : impl_->model.named_parameters()) release(param);
  return_device_memory(impl_->model);
  state_ = State::kOffloaded;
}

void ModelResidency::discard() {
  if (state_ == State::kDiscarded) return;
  at::NoGradGuard no_grad;
  auto& shapes = impl_->shapes;
  shapes.clear();
  const auto& params = impl_->model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& param = params[i].second;
    shapes.push_back(state_ == State::kOffloaded ? impl_->host[i].sizes().vec()
                                                 : param.sizes().vec());
    release(param);
  }
  impl_->host.clear();
  return_device_memory(impl_->model);
  state_ = State::kDiscarded;
}

void ModelResidency::restore() {
  if (state_ == State::kResident) return;
  at::NoGradGuard no_grad;
  const auto& params = impl_->model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& param = params[i].second;
    const auto options = param.options();
    at::Tensor fresh = state_ == State::kOffloaded
                           ? impl_->host[i].to(options, /*non_blocking=*/false, /*copy=*/true)
                           : at::zeros(impl_->shapes[i], options);
    param.set_(fresh);
  }
  impl_->host.clear();
  impl_->shapes.clear();
  state_ = State::kResident;
}

}  // namespace vime::serve
