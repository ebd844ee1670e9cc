// Facts about the LibTorch vime runs on, for `vime --version` and GPU-test skipping.
#pragma once

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

}  // namespace vime::core
