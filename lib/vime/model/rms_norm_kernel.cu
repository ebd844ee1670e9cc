// One warp per row, E consecutive elements per lane and access (16 or 8 bytes where the shape and
// the pointers allow, else one). A row is read twice (sum of squares, then the output), the second
// time from cache. Backward: each warp adds its rows' grad * n into its own shared-memory copy of
// the weight's gradient (no atomics); the block adds its warps' copies in order into one row of the
// workspace, and rms_norm_weight_grad_kernel adds those rows in order: the same bits every run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "vime/model/cuda_elements.cuh"
#include "vime/model/rms_norm_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kMaxThreads = 256;
constexpr int kForwardWarps = kMaxThreads / 32;
constexpr int64_t kBackwardSharedBytes = 96 * 1024;
constexpr int kReduceSplit = 32;  // threads adding one column's workspace rows

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;  // the same tree on every lane: the same bits
}

template <typename T, int E>
__global__ void __launch_bounds__(kMaxThreads)
    rms_norm_forward_kernel(T* __restrict__ out, float* __restrict__ rstd_out,
                            const T* __restrict__ x, const T* __restrict__ weight, int64_t rows,
                            int packs, int dim, float eps) {
  const int64_t row = int64_t(blockIdx.x) * kForwardWarps + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  using P = Pack<T, E>;
  const P* xr = reinterpret_cast<const P*>(x) + row * packs;
  const P* wr = reinterpret_cast<const P*>(weight);
  P* outr = reinterpret_cast<P*>(out) + row * packs;
  float squares = 0.f;
#pragma unroll 4
  for (int p = lane; p < packs; p += 32) {
    const P v = xr[p];
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float f = to_float(v.v[e]);
      squares += f * f;
    }
  }
  const float rstd = rsqrtf(warp_sum(squares) / float(dim) + eps);
  if (lane == 0 && rstd_out != nullptr) rstd_out[row] = rstd;
#pragma unroll 4
  for (int p = lane; p < packs; p += 32) {
    const P v = xr[p], w = wr[p];
    P o;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const T normalized = from_float<T>(to_float(v.v[e]) * rstd);
      o.v[e] = from_float<T>(to_float(w.v[e]) * to_float(normalized));
    }
    outr[p] = o;
  }
}

// Shared memory (kWeightGrad): one fp32 copy of the weight's gradient per warp, element e of pack p
// at e * packs + p so that the lanes of a warp touch consecutive words.
template <typename T, int E, bool kWeightGrad>
__global__ void __launch_bounds__(kMaxThreads)
    rms_norm_backward_kernel(T* __restrict__ grad_x, float* __restrict__ workspace,
                             const T* __restrict__ grad, const T* __restrict__ x,
                             const T* __restrict__ weight, const float* __restrict__ rstd,
                             int64_t rows, int packs, int dim) {
  extern __shared__ float warp_grads[];
  const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* mine = warp_grads + warp * dim;
  if (kWeightGrad) {
    for (int i = lane; i < dim; i += 32) mine[i] = 0.f;
    __syncwarp();
  }
  using P = Pack<T, E>;
  const P* wr = reinterpret_cast<const P*>(weight);
  const int64_t stride = int64_t(gridDim.x) * warps;
  for (int64_t row = int64_t(blockIdx.x) * warps + warp; row < rows; row += stride) {
    const P* gr = reinterpret_cast<const P*>(grad) + row * packs;
    const P* xr = reinterpret_cast<const P*>(x) + row * packs;
    P* dxr = reinterpret_cast<P*>(grad_x) + row * packs;
    const float r = rstd[row];
    float dot = 0.f;  // sum of grad * weight * x
#pragma unroll 4
    for (int p = lane; p < packs; p += 32) {
      const P g = gr[p], v = xr[p], w = wr[p];
#pragma unroll
      for (int e = 0; e < E; ++e) dot += to_float(g.v[e]) * to_float(w.v[e]) * to_float(v.v[e]);
    }
    // grad_x = r * gw - x * r^3 * mean(gw * x)
    const float c = r * r * r * (warp_sum(dot) / float(dim));
#pragma unroll 4
    for (int p = lane; p < packs; p += 32) {
      const P g = gr[p], v = xr[p], w = wr[p];
      P dx;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float gf = to_float(g.v[e]), xf = to_float(v.v[e]);
        dx.v[e] = from_float<T>(r * gf * to_float(w.v[e]) - xf * c);
        if (kWeightGrad) mine[e * packs + p] += gf * to_float(from_float<T>(xf * r));
      }
      dxr[p] = dx;
    }
  }
  if (!kWeightGrad) return;
  __syncthreads();
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const int slot = (i % E) * packs + i / E;
    float sum = 0.f;
    for (int w = 0; w < warps; ++w) sum += warp_grads[w * dim + slot];
    workspace[int64_t(blockIdx.x) * dim + i] = sum;
  }
}

// grad_weight[i] = sum over the workspace's rows of column i, in row order.
template <typename T>
__global__ void __launch_bounds__(32 * kReduceSplit)
    rms_norm_weight_grad_kernel(T* __restrict__ grad_weight, const float* __restrict__ workspace,
                                int blocks, int dim) {
  __shared__ float sums[kReduceSplit][33];
  const int column = blockIdx.x * 32 + threadIdx.x;
  float sum = 0.f;
  if (column < dim) {
#pragma unroll 8
    for (int b = threadIdx.y; b < blocks; b += kReduceSplit)
      sum += workspace[int64_t(b) * dim + column];
  }
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || column >= dim) return;
  float total = 0.f;
  for (int y = 0; y < kReduceSplit; ++y) total += sums[y][threadIdx.x];
  grad_weight[column] = from_float<T>(total);
}

bool aligned(const void* p, int bytes) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Elements per access: 16 bytes where every pointer and the row allow it and a row still has a
// pack for each lane (head_dim 128 in bf16 gets 8 bytes), else 8 bytes, else one element.
template <typename T>
int pack_width(int64_t dim, std::initializer_list<const void*> pointers) {
  auto fits = [&](int e) {
    if (dim % e != 0) return false;
    for (const void* p : pointers)
      if (!aligned(p, e * int(sizeof(T)))) return false;
    return true;
  };
  constexpr int wide = 16 / sizeof(T), half = wide / 2;
  if (fits(wide) && dim / wide >= 32) return wide;
  return fits(half) ? half : 1;
}

int backward_warps(int64_t dim) {
  int warps = kMaxThreads / 32;
  while (warps > 1 && warps * dim * int64_t(sizeof(float)) > kBackwardSharedBytes) warps /= 2;
  return warps;
}

// Blocks of the backward pass = rows of the workspace: enough warps in flight to hide a short
// row's latency (q/k norms over head_dim 128), a workspace of at most ~8 MB for wide rows.
int64_t backward_blocks(int64_t rows, int64_t dim, int warps) {
  const int64_t cap = std::clamp<int64_t>((int64_t(1) << 21) / dim, 128, 1024);
  return std::min((rows + warps - 1) / warps, cap);
}

template <typename T, int E>
void launch_forward(void* out, float* rstd, const void* x, const void* weight, int64_t rows,
                    int64_t dim, float eps, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kForwardWarps - 1) / kForwardWarps);
  rms_norm_forward_kernel<T, E><<<blocks, kMaxThreads, 0, stream>>>(
      static_cast<T*>(out), rstd, static_cast<const T*>(x), static_cast<const T*>(weight), rows,
      static_cast<int>(dim / E), static_cast<int>(dim), eps);
}

template <typename T, int E, bool kWeightGrad>
void launch_backward_rows(void* grad_x, float* workspace, const void* grad, const void* x,
                          const void* weight, const float* rstd, int64_t rows, int64_t dim,
                          cudaStream_t stream) {
  const int warps = kWeightGrad ? backward_warps(dim) : kMaxThreads / 32;
  const int64_t blocks = backward_blocks(rows, dim, warps);
  const size_t shared = kWeightGrad ? size_t(warps) * dim * sizeof(float) : 0;
  auto kernel = rms_norm_backward_kernel<T, E, kWeightGrad>;
  if (shared > 48 * 1024)
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
  kernel<<<static_cast<unsigned>(blocks), warps * 32, shared, stream>>>(
      static_cast<T*>(grad_x), workspace, static_cast<const T*>(grad), static_cast<const T*>(x),
      static_cast<const T*>(weight), rstd, rows, static_cast<int>(dim / E), static_cast<int>(dim));
}

template <typename T>
void launch_backward(void* grad_x, void* grad_weight, float* workspace, const void* grad,
                     const void* x, const void* weight, const float* rstd, int64_t rows,
                     int64_t dim, cudaStream_t stream) {
  const int e = pack_width<T>(dim, {grad_x, grad, x, weight});
  auto rows_pass = [&](auto width) {
    constexpr int E = decltype(width)::value;
    if (grad_weight != nullptr)
      launch_backward_rows<T, E, true>(grad_x, workspace, grad, x, weight, rstd, rows, dim, stream);
    else
      launch_backward_rows<T, E, false>(grad_x, nullptr, grad, x, weight, rstd, rows, dim, stream);
  };
  constexpr int wide = 16 / sizeof(T);
  if (e == wide)
    rows_pass(std::integral_constant<int, wide>());
  else if (e == wide / 2)
    rows_pass(std::integral_constant<int, wide / 2>());
  else
    rows_pass(std::integral_constant<int, 1>());
  if (grad_weight == nullptr) return;
  const int blocks = static_cast<int>(backward_blocks(rows, dim, backward_warps(dim)));
  const auto column_blocks = static_cast<unsigned>((dim + 31) / 32);
  rms_norm_weight_grad_kernel<T><<<column_blocks, dim3(32, kReduceSplit), 0, stream>>>(
      static_cast<T*>(grad_weight), workspace, blocks, static_cast<int>(dim));
}

template <typename T>
void forward_for(void* out, float* rstd, const void* x, const void* weight, int64_t rows,
                 int64_t dim, float eps, cudaStream_t stream) {
  constexpr int wide = 16 / sizeof(T);
  const int e = pack_width<T>(dim, {out, x, weight});
  if (e == wide)
    launch_forward<T, wide>(out, rstd, x, weight, rows, dim, eps, stream);
  else if (e == wide / 2)
    launch_forward<T, wide / 2>(out, rstd, x, weight, rows, dim, eps, stream);
  else
    launch_forward<T, 1>(out, rstd, x, weight, rows, dim, eps, stream);
}

}  // namespace

void rms_norm_forward(void* out, float* rstd, const void* x, const void* weight, int64_t rows,
                      int64_t dim, float eps, RmsNormType type, void* stream) {
  if (rows == 0 || dim == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case RmsNormType::kFloat:
      return forward_for<float>(out, rstd, x, weight, rows, dim, eps, s);
    case RmsNormType::kHalf:
      return forward_for<__half>(out, rstd, x, weight, rows, dim, eps, s);
    case RmsNormType::kBFloat16:
      return forward_for<__nv_bfloat16>(out, rstd, x, weight, rows, dim, eps, s);
  }
}

int64_t rms_norm_backward_workspace(int64_t rows, int64_t dim) {
  return backward_blocks(rows, dim, backward_warps(dim)) * dim;
}

void rms_norm_backward(void* grad_x, void* grad_weight, float* workspace, const void* grad,
                       const void* x, const void* weight, const float* rstd, int64_t rows,
                       int64_t dim, RmsNormType type, void* stream) {
  if (rows == 0 || dim == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case RmsNormType::kFloat:
      return launch_backward<float>(grad_x, grad_weight, workspace, grad, x, weight, rstd, rows,
                                    dim, s);
    case RmsNormType::kHalf:
      return launch_backward<__half>(grad_x, grad_weight, workspace, grad, x, weight, rstd, rows,
                                     dim, s);
    case RmsNormType::kBFloat16:
      return launch_backward<__nv_bfloat16>(grad_x, grad_weight, workspace, grad, x, weight, rstd,
                                            rows, dim, s);
  }
}

}  // namespace vime::cuda_kernels
