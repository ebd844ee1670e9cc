// Elementwise, E consecutive elements per thread (16-byte loads where the pointers allow), a
// grid-stride loop.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "vime/model/cuda_elements.cuh"
#include "vime/model/swiglu_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float sigmoid(float g) { return 1.f / (1.f + expf(-g)); }

template <typename T, int E>
__global__ void __launch_bounds__(kThreads)
    swiglu_forward_kernel(T* __restrict__ out, const T* __restrict__ gate, const T* __restrict__ up,
                          int64_t packs) {
  using P = Pack<T, E>;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < packs;
       i += int64_t(gridDim.x) * kThreads) {
    const P g = reinterpret_cast<const P*>(gate)[i];
    const P u = reinterpret_cast<const P*>(up)[i];
    P o;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float gv = to_float(g.v[e]);
      o.v[e] = from_float<T>(gv * sigmoid(gv) * to_float(u.v[e]));
    }
    reinterpret_cast<P*>(out)[i] = o;
  }
}

template <typename T, int E>
__global__ void __launch_bounds__(kThreads)
    swiglu_backward_kernel(T* __restrict__ grad_gate, T* __restrict__ grad_up,
                           const T* __restrict__ grad, const T* __restrict__ gate,
                           const T* __restrict__ up, int64_t packs) {
  using P = Pack<T, E>;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < packs;
       i += int64_t(gridDim.x) * kThreads) {
    const P d = reinterpret_cast<const P*>(grad)[i];
    const P g = reinterpret_cast<const P*>(gate)[i];
    const P u = reinterpret_cast<const P*>(up)[i];
    P dg, du;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float gv = to_float(g.v[e]), dv = to_float(d.v[e]);
      const float s = sigmoid(gv);
      du.v[e] = from_float<T>(dv * gv * s);
      dg.v[e] = from_float<T>(dv * to_float(u.v[e]) * (s + gv * s * (1.f - s)));
    }
    reinterpret_cast<P*>(grad_gate)[i] = dg;
    reinterpret_cast<P*>(grad_up)[i] = du;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

unsigned blocks_for(int64_t packs) {
  const int64_t blocks = (packs + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

template <typename T>
void launch_forward(void* out, const void* gate, const void* up, int64_t n, cudaStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  auto* o = static_cast<T*>(out);
  const auto *g = static_cast<const T*>(gate), *u = static_cast<const T*>(up);
  if (n % E == 0 && aligned16(out) && aligned16(gate) && aligned16(up)) {
    swiglu_forward_kernel<T, E><<<blocks_for(n / E), kThreads, 0, stream>>>(o, g, u, n / E);
  } else {
    swiglu_forward_kernel<T, 1><<<blocks_for(n), kThreads, 0, stream>>>(o, g, u, n);
  }
}

template <typename T>
void launch_backward(void* grad_gate, void* grad_up, const void* grad, const void* gate,
                     const void* up, int64_t n, cudaStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  auto *dg = static_cast<T*>(grad_gate), *du = static_cast<T*>(grad_up);
  const auto *d = static_cast<const T*>(grad), *g = static_cast<const T*>(gate),
             *u = static_cast<const T*>(up);
  if (n % E == 0 && aligned16(grad_gate) && aligned16(grad_up) && aligned16(grad) &&
      aligned16(gate) && aligned16(up)) {
    swiglu_backward_kernel<T, E>
        <<<blocks_for(n / E), kThreads, 0, stream>>>(dg, du, d, g, u, n / E);
  } else {
    swiglu_backward_kernel<T, 1><<<blocks_for(n), kThreads, 0, stream>>>(dg, du, d, g, u, n);
  }
}

}  // namespace

void swiglu_forward(void* out, const void* gate, const void* up, int64_t n, SwigluType type,
                    void* stream) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case SwigluType::kFloat:
      return launch_forward<float>(out, gate, up, n, s);
    case SwigluType::kHalf:
      return launch_forward<__half>(out, gate, up, n, s);
    case SwigluType::kBFloat16:
      return launch_forward<__nv_bfloat16>(out, gate, up, n, s);
  }
}

void swiglu_backward(void* grad_gate, void* grad_up, const void* grad, const void* gate,
                     const void* up, int64_t n, SwigluType type, void* stream) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case SwigluType::kFloat:
      return launch_backward<float>(grad_gate, grad_up, grad, gate, up, n, s);
    case SwigluType::kHalf:
      return launch_backward<__half>(grad_gate, grad_up, grad, gate, up, n, s);
    case SwigluType::kBFloat16:
      return launch_backward<__nv_bfloat16>(grad_gate, grad_up, grad, gate, up, n, s);
  }
}

}  // namespace vime::cuda_kernels
