// Element helpers the CUDA kernels share: fp32 <-> float/half/bf16 and a vector of E elements
// loaded or stored in one access.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace vime::cuda_kernels {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// E consecutive elements in one access (the caller keeps them aligned to E elements).
template <typename T, int E>
struct alignas(sizeof(T) * E) Pack {
  T v[E];
};

}  // namespace vime::cuda_kernels
