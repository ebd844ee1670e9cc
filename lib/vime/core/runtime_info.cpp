#include "vime/core/runtime_info.hpp"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "vime/core/torch_compat.hpp"

// PyTorch's CUDA LibTorch (its CMake config defines USE_C10D_NCCL); Debian's CPU build has no
// c10_cuda to link.
#if VIME_TORCH_AT_LEAST(2, 0) && defined(USE_C10D_NCCL)
#include <c10/cuda/CUDACachingAllocator.h>
#define VIME_HAS_CUDA_ALLOCATOR_STATS 1
#endif

namespace vime::core {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.torch_version = TORCH_VERSION;
  info.cuda_available = at::hasCUDA();
  info.cuda_device_count = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  return info;
}

long long cuda_peak_allocated_bytes(int device_index) {
#if defined(VIME_HAS_CUDA_ALLOCATOR_STATS)
  if (!at::hasCUDA()) return -1;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  return static_cast<long long>(stats.allocated_bytes[0].peak);  // [0]: StatType::AGGREGATE
#else
  (void)device_index;
  return -1;
#endif
}

void reset_cuda_peak(int device_index) {
#if defined(VIME_HAS_CUDA_ALLOCATOR_STATS)
  if (at::hasCUDA()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index));
  }
#else
  (void)device_index;
#endif
}

}  // namespace vime::core
