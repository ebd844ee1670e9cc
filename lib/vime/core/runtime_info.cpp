#include "vime/core/runtime_info.hpp"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "vime/core/torch_compat.hpp"

namespace vime::core {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.torch_version = TORCH_VERSION;
  info.cuda_available = at::hasCUDA();
  info.cuda_device_count = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  return info;
}

}  // namespace vime::core
