// Facts about the LibTorch vime runs on, for `vime --version` and GPU-test skipping.
#pragma once

#include <optional>
#include <string>

namespace vime::core {

struct RuntimeInfo {
  std::string torch_version;    // "1.13.1", "2.11.0"
  bool cuda_available = false;  // LibTorch has CUDA and a driver answers
  int cuda_device_count = 0;    // devices visible now
};

RuntimeInfo runtime_info();

// The CUDA caching allocator's peak of allocated bytes on `device_index` since the last reset;
// -1 where LibTorch has no CUDA (Debian's CPU build).
long long cuda_peak_allocated_bytes(int device_index);
void reset_cuda_peak(int device_index);
// Bytes the caching allocator has handed out on `device_index` now (-1 without CUDA).
long long cuda_allocated_bytes(int device_index);
// Returns the caching allocator's free blocks to the driver (nothing without CUDA).
void empty_cuda_cache();

struct CudaMemory {
  long long free = 0, total = 0;  // the driver's view of the current device (cudaMemGetInfo)
  long long allocated = 0;        // the caching allocator's live bytes
  long long reserved = 0;         // ... and what it holds, free blocks included
};
// The current device's memory; nullopt without CUDA.
std::optional<CudaMemory> cuda_memory(int device_index);
// "allocated A GiB, reserved R GiB, free F of T GiB": one line for memory errors.
std::string describe(const CudaMemory& memory);

}  // namespace vime::core
