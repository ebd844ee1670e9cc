#include "vime/core/runtime_info.hpp"

#include <ATen/Context.h>
#include <dlfcn.h>
#include <torch/cuda.h>

#include <cstdio>

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

long long cuda_allocated_bytes(int device_index) {
#if defined(VIME_HAS_CUDA_ALLOCATOR_STATS)
  if (!at::hasCUDA()) return -1;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  return static_cast<long long>(stats.allocated_bytes[0].current);
#else
  (void)device_index;
  return -1;
#endif
}

void empty_cuda_cache() {
#if defined(VIME_HAS_CUDA_ALLOCATOR_STATS)
  if (at::hasCUDA()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

std::optional<CudaMemory> cuda_memory(int device_index) {
#if defined(VIME_HAS_CUDA_ALLOCATOR_STATS)
  if (!at::hasCUDA()) return std::nullopt;
  // Through the CUDA runtime LibTorch has loaded: no CUDA headers or link dependency here.
  using MemGetInfo = int (*)(size_t*, size_t*);
  auto mem_get_info = reinterpret_cast<MemGetInfo>(dlsym(RTLD_DEFAULT, "cudaMemGetInfo"));
  size_t free = 0, total = 0;
  if (mem_get_info == nullptr || mem_get_info(&free, &total) != 0) return std::nullopt;
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  CudaMemory m;
  m.free = static_cast<long long>(free);
  m.total = static_cast<long long>(total);
  m.allocated = static_cast<long long>(stats.allocated_bytes[0].current);
  m.reserved = static_cast<long long>(stats.reserved_bytes[0].current);
  return m;
#else
  (void)device_index;
  return std::nullopt;
#endif
}

std::string describe(const CudaMemory& m) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  char line[160];
  std::snprintf(line, sizeof line, "allocated %.2f GiB, reserved %.2f GiB, free %.2f of %.2f GiB",
                m.allocated / kGiB, m.reserved / kGiB, m.free / kGiB, m.total / kGiB);
  return line;
}

}  // namespace vime::core
