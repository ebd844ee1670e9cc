// One CTA per row of logits, its threads striding over the vocabulary in 16-byte loads. Forward
// keeps an online (max, sum, weighted sum) per thread in base 2 and merges them across the CTA;
// backward is elementwise given the row's saved lse and entropy, writing in place.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "vime/model/cuda_elements.cuh"
#include "vime/train/linear_log_probs_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
// The running max before any element: finite, so that (max - new max) * 0 stays 0.
constexpr float kNoMax = -1e30f;

// Softmax statistics of a set of scaled logits x (base 2): m = max x, s = sum 2^(x-m),
// w = sum 2^(x-m) * (x-m). Then log2 sum 2^x = m + log2 s and the entropy in bits is
// log2 s - w / s.
struct Stats {
  float m = kNoMax, s = 0.f, w = 0.f;

  template <int E>
  __device__ __forceinline__ void add(const float (&x)[E]) {
    float m_new = m;
#pragma unroll
    for (int e = 0; e < E; ++e) m_new = fmaxf(m_new, x[e]);
    rescale(m_new);
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float d = x[e] - m;
      const float p = exp2f(d);
      s += p;
      w += p > 0.f ? p * d : 0.f;  // a -inf logit adds nothing (not 0 * -inf)
    }
  }

  // Moves the reference max to m_new >= m: 2^(x-m') (x-m') = c 2^(x-m) ((x-m) + (m-m')).
  __device__ __forceinline__ void rescale(float m_new) {
    const float c = exp2f(m - m_new);
    w = c * (w + (m - m_new) * s);
    s *= c;
    m = m_new;
  }

  __device__ __forceinline__ void merge(const Stats& o) {
    const float m_new = fmaxf(m, o.m);
    Stats other = o;
    rescale(m_new);
    other.rescale(m_new);
    s += other.s;
    w += other.w;
  }
};

__device__ __forceinline__ Stats warp_merge(Stats st) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    Stats o;
    o.m = __shfl_xor_sync(0xffffffffu, st.m, offset);
    o.s = __shfl_xor_sync(0xffffffffu, st.s, offset);
    o.w = __shfl_xor_sync(0xffffffffu, st.w, offset);
    st.merge(o);
  }
  return st;
}

template <typename T, int E>
__device__ __forceinline__ void scaled(const Pack<T, E>& p, float scale, float (&x)[E]) {
#pragma unroll
  for (int e = 0; e < E; ++e) x[e] = to_float(p.v[e]) * scale;
}

template <typename T, int E>
__global__ void __launch_bounds__(kThreads)
    log_probs_forward_kernel(const T* __restrict__ logits, int vocab, int64_t ld,
                             const int64_t* __restrict__ targets, float inv_t,
                             float* __restrict__ log_probs, float* __restrict__ lse,
                             float* __restrict__ entropy) {
  const int64_t row = blockIdx.x;
  const auto* z = reinterpret_cast<const Pack<T, E>*>(logits + row * ld);
  const int packs = vocab / E;
  const float scale = inv_t * kLog2e;
  Stats st;
  int i = threadIdx.x;
  constexpr int U = 4;  // loads in flight per thread
  for (; i + (U - 1) * kThreads < packs; i += U * kThreads) {
    Pack<T, E> p[U];
#pragma unroll
    for (int u = 0; u < U; ++u) p[u] = z[i + u * kThreads];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float x[E];
      scaled(p[u], scale, x);
      st.add(x);
    }
  }
  for (; i < packs; i += kThreads) {
    float x[E];
    scaled(z[i], scale, x);
    st.add(x);
  }

  st = warp_merge(st);
  __shared__ float sm[kWarps], ss[kWarps], sw[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = st.m;
    ss[warp] = st.s;
    sw[warp] = st.w;
  }
  __syncthreads();
  if (warp != 0) return;
  Stats all;
  if (lane < kWarps) {
    all.m = sm[lane];
    all.s = ss[lane];
    all.w = sw[lane];
  }
  all = warp_merge(all);
  if (lane != 0) return;
  const float log2_s = log2f(all.s);
  const float row_lse = kLn2 * (all.m + log2_s);
  lse[row] = row_lse;
  if (entropy != nullptr) entropy[row] = kLn2 * (log2_s - all.w / all.s);
  const int64_t t = targets[row];
  log_probs[row] = (t >= 0 && t < vocab) ? to_float(logits[row * ld + t]) * inv_t - row_lse : NAN;
}

template <typename T, int E>
__global__ void __launch_bounds__(kThreads)
    log_probs_backward_kernel(T* __restrict__ logits, int vocab, int64_t ld,
                              const int64_t* __restrict__ targets, float inv_t,
                              const float* __restrict__ lse, const float* __restrict__ entropy,
                              const float* __restrict__ grad_log_probs,
                              const float* __restrict__ grad_entropy) {
  const int64_t row = blockIdx.x;
  auto* z = reinterpret_cast<Pack<T, E>*>(logits + row * ld);
  const int packs = vocab / E;
  // In base 2: log2 p = x - lse2 with x = logit * inv_t * log2(e).
  const float scale = inv_t * kLog2e;
  const float lse2 = lse[row] * kLog2e;
  const float g_lp = grad_log_probs != nullptr ? grad_log_probs[row] : 0.f;
  const float g_h = grad_entropy != nullptr ? grad_entropy[row] : 0.f;
  const float h = grad_entropy != nullptr ? entropy[row] : 0.f;
  const int64_t t = targets[row];
  // g = (g_lp * (onehot - p) - g_h * p * (ln p + H)) / T = -p * (a + b * log2 p) [+ g_lp / T]
  const float a = (g_lp + g_h * h) * inv_t, b = g_h * kLn2 * inv_t, hit = g_lp * inv_t;
  for (int i = threadIdx.x; i < packs; i += kThreads) {
    Pack<T, E> p = z[i];
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float log2_p = fmaf(to_float(p.v[e]), scale, -lse2);
      const float prob = exp2f(log2_p);
      float g = -prob * fmaf(b, log2_p, a);
      if (int64_t(i) * E + e == t) g += hit;
      p.v[e] = from_float<T>(g);
    }
    z[i] = p;
  }
}

template <typename T>
bool vectorizable(const void* logits, int64_t vocab, int64_t ld) {
  constexpr int E = 16 / sizeof(T);
  return reinterpret_cast<uintptr_t>(logits) % 16 == 0 && vocab % E == 0 && ld % E == 0;
}

template <typename T>
void launch_forward(const void* logits, int64_t rows, int64_t vocab, int64_t ld,
                    const int64_t* targets, float inv_t, float* log_probs, float* lse,
                    float* entropy, cudaStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  const auto* z = static_cast<const T*>(logits);
  const int v = static_cast<int>(vocab);
  const auto grid = static_cast<unsigned>(rows);
  if (vectorizable<T>(logits, vocab, ld)) {
    log_probs_forward_kernel<T, E>
        <<<grid, kThreads, 0, stream>>>(z, v, ld, targets, inv_t, log_probs, lse, entropy);
  } else {
    log_probs_forward_kernel<T, 1>
        <<<grid, kThreads, 0, stream>>>(z, v, ld, targets, inv_t, log_probs, lse, entropy);
  }
}

template <typename T>
void launch_backward(void* logits, int64_t rows, int64_t vocab, int64_t ld, const int64_t* targets,
                     float inv_t, const float* lse, const float* entropy,
                     const float* grad_log_probs, const float* grad_entropy, cudaStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  auto* z = static_cast<T*>(logits);
  const int v = static_cast<int>(vocab);
  const auto grid = static_cast<unsigned>(rows);
  if (vectorizable<T>(logits, vocab, ld)) {
    log_probs_backward_kernel<T, E><<<grid, kThreads, 0, stream>>>(
        z, v, ld, targets, inv_t, lse, entropy, grad_log_probs, grad_entropy);
  } else {
    log_probs_backward_kernel<T, 1><<<grid, kThreads, 0, stream>>>(
        z, v, ld, targets, inv_t, lse, entropy, grad_log_probs, grad_entropy);
  }
}

}  // namespace

void linear_log_probs_forward(const void* logits, int64_t rows, int64_t vocab, int64_t ld,
                              const int64_t* targets, float temperature, float* log_probs,
                              float* lse, float* entropy, LogitsType type, void* stream) {
  if (rows == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const float inv_t = 1.f / temperature;
  switch (type) {
    case LogitsType::kFloat:
      return launch_forward<float>(logits, rows, vocab, ld, targets, inv_t, log_probs, lse, entropy,
                                   s);
    case LogitsType::kHalf:
      return launch_forward<__half>(logits, rows, vocab, ld, targets, inv_t, log_probs, lse,
                                    entropy, s);
    case LogitsType::kBFloat16:
      return launch_forward<__nv_bfloat16>(logits, rows, vocab, ld, targets, inv_t, log_probs, lse,
                                           entropy, s);
  }
}

void linear_log_probs_backward(void* logits, int64_t rows, int64_t vocab, int64_t ld,
                               const int64_t* targets, float temperature, const float* lse,
                               const float* entropy, const float* grad_log_probs,
                               const float* grad_entropy, LogitsType type, void* stream) {
  if (rows == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const float inv_t = 1.f / temperature;
  switch (type) {
    case LogitsType::kFloat:
      return launch_backward<float>(logits, rows, vocab, ld, targets, inv_t, lse, entropy,
                                    grad_log_probs, grad_entropy, s);
    case LogitsType::kHalf:
      return launch_backward<__half>(logits, rows, vocab, ld, targets, inv_t, lse, entropy,
                                     grad_log_probs, grad_entropy, s);
    case LogitsType::kBFloat16:
      return launch_backward<__nv_bfloat16>(logits, rows, vocab, ld, targets, inv_t, lse, entropy,
                                            grad_log_probs, grad_entropy, s);
  }
}

}  // namespace vime::cuda_kernels
