// Paged decode attention in the manner of vLLM's paged_attention_v1, with one CTA per (sequence,
// kv head) so that a GQA group's query heads read each K/V row once. The CTA's lanes form groups
// of LP (32: a warp per position; 16: two positions per warp, half the shuffles per score, meant
// for kv heads that serve several query heads; opt-in), each group walking every kStates-th
// position of the context (four at a time, for loads in flight) with an online softmax per query
// head in fp32; the groups' partial results are merged in shared memory.
//
// Split-K (flash-decoding; vLLM's paged_attention_v2): with splits > 1 a row's context is cut into
// up to `splits` ranges, one CTA each (blockIdx.z), that write their normalised partial output and
// its softmax max and sum; a second kernel merges them. Rows too short for more than one range
// write their output directly, as unsplit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "vime/model/cuda_elements.cuh"
#include "vime/model/paged_decode_kernel.hpp"

namespace vime::cuda_kernels {
namespace {

constexpr int kWarps = 4;
constexpr float kLog2e = 1.4426950408889634f;

// The sum over each aligned group of LP lanes, in every lane of the group.
template <int LP>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int offset = LP / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// The online softmax of one group of LP lanes over the positions it reads, for the G query heads
// of a kv head; each lane holds E = head_dim / LP elements of each head (scores in base 2: q is
// prescaled by scale * log2(e)). A warp holds 32 / LP such groups, each at its own position.
template <typename T, int E, int G, int LP>
struct GroupState {
  float q[G][E], m[G], l[G], acc[G][E];

  // U positions at once: their scores, one rescale, then their values. A position with valid[u]
  // false (past the range: the group's lanes loaded some other position) counts for nothing.
  template <int U>
  __device__ __forceinline__ void consume(const Pack<T, E> (&k)[U], const Pack<T, E> (&v)[U],
                                          const bool (&valid)[U]) {
    float s[U][G];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < E; ++e) dot += q[g][e] * to_float(k[u].v[e]);
        s[u][g] = dot;
      }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float sum = group_sum<LP>(s[u][g]);  // every lane takes part: no divergence here
        s[u][g] = valid[u] ? sum : -INFINITY;
      }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float m_new = m[g];
#pragma unroll
      for (int u = 0; u < U; ++u) m_new = fmaxf(m_new, s[u][g]);
      if (m_new == -INFINITY) continue;  // nothing valid yet
      const float correction = exp2f(m[g] - m_new);
      l[g] *= correction;
#pragma unroll
      for (int e = 0; e < E; ++e) acc[g][e] *= correction;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float p = exp2f(s[u][g] - m_new);
        l[g] += p;
#pragma unroll
        for (int e = 0; e < E; ++e) acc[g][e] += p * to_float(v[u].v[e]);
      }
      m[g] = m_new;
    }
  }
};

// The ranges a row of `length` positions is cut into under a launch of `splits` (at least 1).
__device__ __forceinline__ int row_splits(int length, int splits) {
  return max(1, min(splits, (length + kMinSplitPositions - 1) / kMinSplitPositions));
}

// partial_out [batch, heads, splits, D] and partial_ml [batch, heads, splits, 2] (fp32): where the
// CTAs of a split row leave their part (unused when splits == 1).
template <typename T, int D, int G, int LP>
__global__ void __launch_bounds__(kWarps * 32)
    paged_decode_kernel(T* __restrict__ out, const T* __restrict__ q,
                        const T* __restrict__ key_cache, const T* __restrict__ value_cache,
                        const int32_t* __restrict__ block_tables,
                        const int32_t* __restrict__ context_lens, int kv_heads, int block_size,
                        int max_blocks, float scale, int splits, float* __restrict__ partial_out,
                        float* __restrict__ partial_ml) {
  constexpr int E = D / LP;                  // elements of a head each lane holds
  constexpr int kStates = kWarps * 32 / LP;  // lane groups, each with its softmax state
  constexpr int U = 4;                       // positions a group loads before using them
  using P = Pack<T, E>;
  const int kv_head = blockIdx.x, b = blockIdx.y, split = blockIdx.z;
  const int lane = threadIdx.x % LP;   // within its group
  const int state = threadIdx.x / LP;  // warp w holds states w * 32 / LP ...
  const int heads = kv_heads * G;
  const int row_length = context_lens[b];
  const int parts = row_splits(row_length, splits);
  if (split >= parts) return;
  const int chunk = (row_length + parts - 1) / parts;
  const int begin = split * chunk, length = min(row_length, begin + chunk);
  const int32_t* table = block_tables + static_cast<int64_t>(b) * max_blocks;
  const int64_t row = static_cast<int64_t>(kv_heads) * D;  // elements of one slot
  const int64_t head_offset = static_cast<int64_t>(kv_head) * D + lane * E;
  auto at = [&](const T* cache, int t) {
    const int64_t slot = static_cast<int64_t>(table[t / block_size]) * block_size + t % block_size;
    return *reinterpret_cast<const P*>(cache + slot * row + head_offset);
  };

  GroupState<T, E, G, LP> st;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    st.m[g] = -INFINITY;
    st.l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      st.q[g][e] =
          to_float(q[(static_cast<int64_t>(b) * heads + kv_head * G + g) * D + lane * E + e]) *
          scale * kLog2e;
      st.acc[g][e] = 0.f;
    }
  }

  // State i reads positions begin + i, begin + i + kStates, ...; the loops' bounds are those of
  // the warp's last group, so a warp's lanes stay together (the group sums shuffle across it).
  constexpr int kWarpSpan = 32 / LP - 1;  // the warp's last group, from its first
  const int warp_last = state - state % (32 / LP) + kWarpSpan - state;  // from this group
  int t = begin + state;
  for (; t + warp_last + (U - 1) * kStates < length; t += U * kStates) {
    P k[U], v[U];
    bool valid[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      k[u] = at(key_cache, t + u * kStates);
      v[u] = at(value_cache, t + u * kStates);
      valid[u] = true;
    }
    st.template consume<U>(k, v, valid);
  }
  for (; t - (state % (32 / LP)) < length; t += kStates) {  // while the warp's first group has one
    const bool valid[1] = {t < length};
    const int at_t = valid[0] ? t : length - 1;
    P k[1] = {at(key_cache, at_t)}, v[1] = {at(value_cache, at_t)};
    st.template consume<1>(k, v, valid);
  }

  __shared__ float shared_m[kStates][G], shared_l[kStates][G];
  __shared__ float shared_acc[kStates][G][D];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (lane == 0) {
      shared_m[state][g] = st.m[g];
      shared_l[state][g] = st.l[g];
    }
#pragma unroll
    for (int e = 0; e < E; ++e) shared_acc[state][g][lane * E + e] = st.acc[g][e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
    const int g = i / D, d = i % D;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kStates; ++w) m_all = fmaxf(m_all, shared_m[w][g]);
    float l_all = 0.f, o = 0.f;
    if (m_all != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kStates; ++w) {
        const float f = exp2f(shared_m[w][g] - m_all);
        l_all += shared_l[w][g] * f;
        o += shared_acc[w][g][d] * f;
      }
      o /= l_all;
    }
    const int64_t head = static_cast<int64_t>(b) * heads + kv_head * G + g;
    if (parts == 1) {
      out[head * D + d] = from_float<T>(o);
    } else {
      const int64_t part = head * splits + split;
      partial_out[part * D + d] = o;
      if (d == 0) {
        partial_ml[part * 2] = m_all;
        partial_ml[part * 2 + 1] = l_all;
      }
    }
  }
}

// One CTA of D threads per (query head, sequence): merges the parts of a split row.
template <typename T, int D>
__global__ void __launch_bounds__(D)
    merge_splits_kernel(T* __restrict__ out, const int32_t* __restrict__ context_lens, int heads,
                        int splits, const float* __restrict__ partial_out,
                        const float* __restrict__ partial_ml) {
  const int head = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const int parts = row_splits(context_lens[b], splits);
  if (parts == 1) return;  // written by its only CTA
  const int64_t row_head = static_cast<int64_t>(b) * heads + head;
  const float* ml = partial_ml + row_head * splits * 2;
  float m_all = -INFINITY;
  for (int s = 0; s < parts; ++s) m_all = fmaxf(m_all, ml[s * 2]);
  float l_all = 0.f, o = 0.f;
  if (m_all != -INFINITY) {
    for (int s = 0; s < parts; ++s) {
      const float f = exp2f(ml[s * 2] - m_all) * ml[s * 2 + 1];
      l_all += f;
      o += partial_out[(row_head * splits + s) * D + d] * f;
    }
    o /= l_all;
  }
  out[row_head * D + d] = from_float<T>(o);
}

// What a launch needs besides the tensors' pointers.
struct Shape {
  int batch, kv_heads, block_size, max_blocks;
  float scale;
  int splits;
  float* workspace;
  int lanes;  // per position: 32 or 16
};

template <typename T, int D, int G, int LP>
void launch(void* out, const void* q, const void* k, const void* v, const int32_t* tables,
            const int32_t* lens, const Shape& s, cudaStream_t stream) {
  const int heads = s.kv_heads * G;
  float* partial_out = s.workspace;
  float* partial_ml =
      s.workspace + static_cast<int64_t>(s.batch) * heads * s.splits * D;  // after partial_out
  const dim3 grid(s.kv_heads, s.batch, s.splits);
  paged_decode_kernel<T, D, G, LP><<<grid, kWarps * 32, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(q), static_cast<const T*>(k),
      static_cast<const T*>(v), tables, lens, s.kv_heads, s.block_size, s.max_blocks, s.scale,
      s.splits, partial_out, partial_ml);
  if (s.splits > 1)
    merge_splits_kernel<T, D><<<dim3(heads, s.batch), D, 0, stream>>>(
        static_cast<T*>(out), lens, heads, s.splits, partial_out, partial_ml);
}

template <typename T, int D>
bool dispatch_groups(int groups, void* out, const void* q, const void* k, const void* v,
                     const int32_t* tables, const int32_t* lens, const Shape& shape,
                     cudaStream_t stream) {
#define VIME_GROUP_CASE(G)                                            \
  case G:                                                             \
    if (shape.lanes == 16)                                            \
      launch<T, D, G, 16>(out, q, k, v, tables, lens, shape, stream); \
    else                                                              \
      launch<T, D, G, 32>(out, q, k, v, tables, lens, shape, stream); \
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
                       const void* v, const int32_t* tables, const int32_t* lens,
                       const Shape& shape, cudaStream_t stream) {
  if (head_dim == 128)
    return dispatch_groups<T, 128>(groups, out, q, k, v, tables, lens, shape, stream);
  if (head_dim == 64)
    return dispatch_groups<T, 64>(groups, out, q, k, v, tables, lens, shape, stream);
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
                            ElementType type, void* stream, int splits, float* workspace,
                            int lanes_per_position) {
  if (batch == 0) return true;
  if (splits < 1 || (splits > 1 && workspace == nullptr)) return false;
  // Two positions per warp halve the shuffles where a warp's 4+ query heads share each K/V row: on
  // an H100, Qwen3-4B (GQA 4, head_dim 128) at 256 rows x 384 context 5.50 ms vs 7.08 ms per step
  // (engine_bench --breakdown: attention_ms_lanes16 / _lanes32); GQA 2 stays on a warp each.
  if (lanes_per_position == 0) lanes_per_position = head_dim == 128 && groups >= 3 ? 16 : 32;
  if (lanes_per_position != 16 && lanes_per_position != 32) return false;
  auto s = static_cast<cudaStream_t>(stream);
  const Shape shape{batch, kv_heads, block_size, max_blocks,
                    scale, splits,   workspace,  lanes_per_position};
  switch (type) {
    case ElementType::kFloat:
      return dispatch_head_dim<float>(head_dim, groups, out, q, key_cache, value_cache,
                                      block_tables, context_lens, shape, s);
    case ElementType::kHalf:
      return dispatch_head_dim<__half>(head_dim, groups, out, q, key_cache, value_cache,
                                       block_tables, context_lens, shape, s);
    case ElementType::kBFloat16:
      return dispatch_head_dim<__nv_bfloat16>(head_dim, groups, out, q, key_cache, value_cache,
                                              block_tables, context_lens, shape, s);
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
