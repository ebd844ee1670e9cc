// One thread per E consecutive elements of the first half of a head and the matching E of the
// second half (16-byte loads where the shapes allow).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "vime/model/cuda_elements.cuh"
#include "vime/model/rope_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <typename T, int E, bool kBackward>
__global__ void __launch_bounds__(kThreads)
    rope_kernel(T* out, const T* x, const T* __restrict__ cos, const T* __restrict__ sin,
                int64_t units, int heads, int head_dim) {
  const int64_t unit = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (unit >= units) return;
  const int half = head_dim / 2, per_row = half / E;
  const int64_t row = unit / per_row;  // token * heads + head
  const int j = static_cast<int>(unit % per_row) * E;
  const int64_t token = row / heads;
  using P = Pack<T, E>;
  const P a = *reinterpret_cast<const P*>(x + row * head_dim + j);
  const P b = *reinterpret_cast<const P*>(x + row * head_dim + half + j);
  const P c1 = *reinterpret_cast<const P*>(cos + token * head_dim + j);
  const P c2 = *reinterpret_cast<const P*>(cos + token * head_dim + half + j);
  const P s1 = *reinterpret_cast<const P*>(sin + token * head_dim + j);
  const P s2 = *reinterpret_cast<const P*>(sin + token * head_dim + half + j);
  P ra, rb;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const float av = to_float(a.v[e]), bv = to_float(b.v[e]);
    float first, second;
    if (kBackward) {
      first = av * to_float(c1.v[e]) + bv * to_float(s2.v[e]);
      second = bv * to_float(c2.v[e]) - av * to_float(s1.v[e]);
    } else {
      first = av * to_float(c1.v[e]) - bv * to_float(s1.v[e]);
      second = bv * to_float(c2.v[e]) + av * to_float(s2.v[e]);
    }
    ra.v[e] = from_float<T>(first);
    rb.v[e] = from_float<T>(second);
  }
  *reinterpret_cast<P*>(out + row * head_dim + j) = ra;
  *reinterpret_cast<P*>(out + row * head_dim + half + j) = rb;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, int E, bool kBackward>
void launch(void* out, const void* x, const void* cos, const void* sin, int64_t tokens, int heads,
            int head_dim, cudaStream_t stream) {
  const int64_t units = tokens * heads * (head_dim / 2 / E);
  const auto blocks = static_cast<unsigned>((units + kThreads - 1) / kThreads);
  rope_kernel<T, E, kBackward><<<blocks, kThreads, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(cos),
      static_cast<const T*>(sin), units, heads, head_dim);
}

template <typename T>
void dispatch(void* out, const void* x, const void* cos, const void* sin, int64_t tokens, int heads,
              int head_dim, bool backward, cudaStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  const bool vector =
      (head_dim / 2) % E == 0 && aligned16(out) && aligned16(x) && aligned16(cos) && aligned16(sin);
  if (vector && backward)
    return launch<T, E, true>(out, x, cos, sin, tokens, heads, head_dim, stream);
  if (vector) return launch<T, E, false>(out, x, cos, sin, tokens, heads, head_dim, stream);
  if (backward) return launch<T, 1, true>(out, x, cos, sin, tokens, heads, head_dim, stream);
  launch<T, 1, false>(out, x, cos, sin, tokens, heads, head_dim, stream);
}

}  // namespace

void rope(void* out, const void* x, const void* cos, const void* sin, int64_t tokens, int heads,
          int head_dim, bool backward, RopeType type, void* stream) {
  if (tokens == 0 || heads == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case RopeType::kFloat:
      return dispatch<float>(out, x, cos, sin, tokens, heads, head_dim, backward, s);
    case RopeType::kHalf:
      return dispatch<__half>(out, x, cos, sin, tokens, heads, head_dim, backward, s);
    case RopeType::kBFloat16:
      return dispatch<__nv_bfloat16>(out, x, cos, sin, tokens, heads, head_dim, backward, s);
  }
}

}  // namespace vime::cuda_kernels
