// Paged decode attention in the manner of vLLM's paged_attention_v1, with one CTA per (sequence,
// kv head) so that a GQA group's query heads read each K/V row once. Each warp walks every
// kWarps-th position of the context (two at a time, for loads in flight), keeping an online
// softmax per query head in fp32; the warps' partial results are merged in shared memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "vime/model/paged_decode_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kWarps = 4;
constexpr float kLog2e = 1.4426950408889634f;

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

// E consecutive elements in one load (the caller keeps them aligned to E elements).
template <typename T, int E>
struct alignas(sizeof(T) * E) Pack {
  T v[E];
};

template <typename T, int E>
__device__ __forceinline__ void load(const T* p, float (&out)[E]) {
  const Pack<T, E> pack = *reinterpret_cast<const Pack<T, E>*>(p);
#pragma unroll
  for (int e = 0; e < E; ++e) out[e] = to_float(pack.v[e]);
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

template <typename T, int D, int G>
__global__ void __launch_bounds__(kWarps * 32)
    paged_decode_kernel(T* __restrict__ out, const T* __restrict__ q,
                        const T* __restrict__ key_cache, const T* __restrict__ value_cache,
                        const int32_t* __restrict__ block_tables,
                        const int32_t* __restrict__ context_lens, int kv_heads, int block_size,
                        int max_blocks, float scale) {
  constexpr int E = D / 32;  // elements of a head each lane holds
  const int kv_head = blockIdx.x, b = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int heads = kv_heads * G;
  const int length = context_lens[b];
  const int32_t* table = block_tables + static_cast<int64_t>(b) * max_blocks;
  const int64_t row = static_cast<int64_t>(kv_heads) * D;  // elements of one slot
  const int64_t head_offset = static_cast<int64_t>(kv_head) * D + lane * E;

  // Scores in base 2: q is scaled by scale * log2(e) once.
  float qv[G][E];
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int e = 0; e < E; ++e)
      qv[g][e] =
          to_float(q[(static_cast<int64_t>(b) * heads + kv_head * G + g) * D + lane * E + e]) *
          scale * kLog2e;
  float m[G], l[G], acc[G][E];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < E; ++e) acc[g][e] = 0.f;
  }

  auto accumulate = [&](const float(&k)[E], const float(&v)[E]) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < E; ++e) s += qv[g][e] * k[e];
      s = warp_sum(s);
      const float m_new = fmaxf(m[g], s);
      const float correction = exp2f(m[g] - m_new);
      const float p = exp2f(s - m_new);
      l[g] = l[g] * correction + p;
#pragma unroll
      for (int e = 0; e < E; ++e) acc[g][e] = acc[g][e] * correction + p * v[e];
      m[g] = m_new;
    }
  };
  auto slot_of = [&](int t) {
    return static_cast<int64_t>(table[t / block_size]) * block_size + t % block_size;
  };

  int t = warp;
  for (; t + kWarps < length; t += 2 * kWarps) {
    const int64_t s0 = slot_of(t) * row + head_offset, s1 = slot_of(t + kWarps) * row + head_offset;
    float k0[E], v0[E], k1[E], v1[E];
    load<T, E>(key_cache + s0, k0);
    load<T, E>(value_cache + s0, v0);
    load<T, E>(key_cache + s1, k1);
    load<T, E>(value_cache + s1, v1);
    accumulate(k0, v0);
    accumulate(k1, v1);
  }
  if (t < length) {
    const int64_t s0 = slot_of(t) * row + head_offset;
    float k0[E], v0[E];
    load<T, E>(key_cache + s0, k0);
    load<T, E>(value_cache + s0, v0);
    accumulate(k0, v0);
  }

  __shared__ float shared_m[kWarps][G], shared_l[kWarps][G];
  __shared__ float shared_acc[kWarps][G][D];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (lane == 0) {
      shared_m[warp][g] = m[g];
      shared_l[warp][g] = l[g];
    }
#pragma unroll
    for (int e = 0; e < E; ++e) shared_acc[warp][g][lane * E + e] = acc[g][e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
    const int g = i / D, d = i % D;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, shared_m[w][g]);
    float l_all = 0.f, o = 0.f;
    if (m_all != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float f = exp2f(shared_m[w][g] - m_all);
        l_all += shared_l[w][g] * f;
        o += shared_acc[w][g][d] * f;
      }
      o /= l_all;
    }
    out[(static_cast<int64_t>(b) * heads + kv_head * G + g) * D + d] = from_float<T>(o);
  }
}

template <typename T, int D, int G>
void launch(void* out, const void* q, const void* k, const void* v, const int32_t* tables,
            const int32_t* lens, int batch, int kv_heads, int block_size, int max_blocks,
            float scale, cudaStream_t stream) {
  const dim3 grid(kv_heads, batch);
  paged_decode_kernel<T, D, G><<<grid, kWarps * 32, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(q), static_cast<const T*>(k),
      static_cast<const T*>(v), tables, lens, kv_heads, block_size, max_blocks, scale);
}

template <typename T, int D>
bool dispatch_groups(int groups, void* out, const void* q, const void* k, const void* v,
                     const int32_t* tables, const int32_t* lens, int batch, int kv_heads,
                     int block_size, int max_blocks, float scale, cudaStream_t stream) {
#define VIME_GROUP_CASE(G)                                                                      \
  case G:                                                                                       \
    launch<T, D, G>(out, q, k, v, tables, lens, batch, kv_heads, block_size, max_blocks, scale, \
                    stream);                                                                    \
    return true;
  switch (groups) {
    VIME_GROUP_CASE(1)
    VIME_GROUP_CASE(2)
    VIME_GROUP_CASE(3)
    VIME_GROUP_CASE(4)
    VIME_GROUP_CASE(5)
    VIME_GROUP_CASE(6)
    VIME_GROUP_CASE(7)
    VIME_GROUP_CASE(8)
    default:
      return false;
  }
#undef VIME_GROUP_CASE
}

template <typename T>
bool dispatch_head_dim(int head_dim, int groups, void* out, const void* q, const void* k,
                       const void* v, const int32_t* tables, const int32_t* lens, int batch,
                       int kv_heads, int block_size, int max_blocks, float scale,
                       cudaStream_t stream) {
  if (head_dim == 128)
    return dispatch_groups<T, 128>(groups, out, q, k, v, tables, lens, batch, kv_heads, block_size,
                                   max_blocks, scale, stream);
  if (head_dim == 64)
    return dispatch_groups<T, 64>(groups, out, q, k, v, tables, lens, batch, kv_heads, block_size,
                                  max_blocks, scale, stream);
  return false;
}

template <typename T>
__global__ void kv_write_kernel(T* __restrict__ key_cache, T* __restrict__ value_cache,
                                const T* __restrict__ k, const T* __restrict__ v,
                                const int32_t* __restrict__ slots, int row_elements,
                                int64_t k_stride, int64_t v_stride) {
  const int i = blockIdx.x;
  const int64_t slot = slots[i];
  if (slot < 0) return;
  for (int j = threadIdx.x; j < row_elements; j += blockDim.x) {
    key_cache[slot * row_elements + j] = k[i * k_stride + j];
    value_cache[slot * row_elements + j] = v[i * v_stride + j];
  }
}

template <typename T>
void launch_kv_write(void* kc, void* vc, const void* k, const void* v, const int32_t* slots,
                     int tokens, int row_elements, int64_t k_stride, int64_t v_stride,
                     cudaStream_t stream) {
  if (tokens == 0) return;
  const int threads = row_elements >= 1024 ? 1024 : ((row_elements + 31) / 32) * 32;
  kv_write_kernel<T><<<tokens, threads, 0, stream>>>(
      static_cast<T*>(kc), static_cast<T*>(vc), static_cast<const T*>(k), static_cast<const T*>(v),
      slots, row_elements, k_stride, v_stride);
}

}  // namespace

bool paged_decode_attention(void* out, const void* q, const void* key_cache,
                            const void* value_cache, const int32_t* block_tables,
                            const int32_t* context_lens, int batch, int kv_heads, int groups,
                            int head_dim, int block_size, int max_blocks, float scale,
                            ElementType type, void* stream) {
  if (batch == 0) return true;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case ElementType::kFloat:
      return dispatch_head_dim<float>(head_dim, groups, out, q, key_cache, value_cache,
                                      block_tables, context_lens, batch, kv_heads, block_size,
                                      max_blocks, scale, s);
    case ElementType::kHalf:
      return dispatch_head_dim<__half>(head_dim, groups, out, q, key_cache, value_cache,
                                       block_tables, context_lens, batch, kv_heads, block_size,
                                       max_blocks, scale, s);
    case ElementType::kBFloat16:
      return dispatch_head_dim<__nv_bfloat16>(head_dim, groups, out, q, key_cache, value_cache,
                                              block_tables, context_lens, batch, kv_heads,
                                              block_size, max_blocks, scale, s);
  }
  return false;
}

void paged_kv_write(void* key_cache, void* value_cache, const void* k, const void* v,
                    const int32_t* slots, int tokens, int row_elements, int64_t k_stride,
                    int64_t v_stride, ElementType type, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case ElementType::kFloat:
      return launch_kv_write<float>(key_cache, value_cache, k, v, slots, tokens, row_elements,
                                    k_stride, v_stride, s);
    case ElementType::kHalf:
      return launch_kv_write<__half>(key_cache, value_cache, k, v, slots, tokens, row_elements,
                                     k_stride, v_stride, s);
    case ElementType::kBFloat16:
      return launch_kv_write<__nv_bfloat16>(key_cache, value_cache, k, v, slots, tokens,
                                            row_elements, k_stride, v_stride, s);
  }
}

}  // namespace vime::cuda_kernels
