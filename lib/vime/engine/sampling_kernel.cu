// One CTA per row. Pass 1 walks the row in tiles of kThreads x kPack elements (coalesced pack
// loads) keeping, per thread, online: the max z and sum exp(z - max) over all tokens, the argmax
// of the unmasked tokens and sum exp(z - that max) over the kept ones, and the last kept token; the
// CTA merges them. Pass 2
// (sampling rows only) walks the tiles again in token order with a block-wide exclusive scan of
// the kept weights in fp64 and stops at the tile where the running sum passes u * total: the first
// thread whose inclusive sum passes it finds the token among its kPack elements.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cub/block/block_scan.cuh>

#include "vime/engine/sampling_kernel.hpp"
#include "vime/model/cuda_elements.cuh"

namespace vime::cuda_kernels {
namespace {

constexpr int kThreads = 512;
constexpr int kPack = 8;  // elements per thread per tile
constexpr int kTile = kThreads * kPack;

template <typename T>
using Pack = cuda_kernels::Pack<T, kPack>;

// One row's view: its logits, temperature, mask and cut.
template <typename T, bool kVector>
struct Row {
  const T* logits;
  int vocab;
  float temperature;
  const double* mask;  // token ids (as fp64)
  int mask_count;
  float threshold;

  // The thread's kPack values of z at `first` (-inf past the vocabulary, `valid` false there).
  __device__ __forceinline__ void load(int first, float (&z)[kPack], bool (&valid)[kPack]) const {
    if (kVector && first + kPack <= vocab) {
      const Pack<T> p = *reinterpret_cast<const Pack<T>*>(logits + first);
#pragma unroll
      for (int e = 0; e < kPack; ++e) {
        z[e] = __fdiv_rn(to_float(p.v[e]), temperature);  // as ATen's fp32 division
        valid[e] = true;
      }
      return;
    }
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      valid[e] = first + e < vocab;
      z[e] = valid[e] ? __fdiv_rn(to_float(logits[first + e]), temperature) : -INFINITY;
    }
  }

  __device__ __forceinline__ bool masked(int token) const {
    for (int j = 0; j < mask_count; ++j)
      if (static_cast<int>(mask[j]) == token) return true;
    return false;
  }
  __device__ __forceinline__ bool kept(int token, float z) const {
    return z >= threshold && !masked(token);
  }
};

// What pass 1 gathers; merged across threads. The kept tokens' sum is taken against the largest
// unmasked z (a filter never cuts it), not against the largest z: a masked token far above the
// rest must not underflow their weights.
struct Stats {
  float max;       // over every token (NaN ignored; a NaN reaches the sums instead)
  float sum_all;   // sum exp(z - max) over every token
  float best;      // the largest unmasked z ...
  int best_token;  // ... and its first token (INT_MAX: none)
  float sum_kept;  // sum exp(z - best) over the kept tokens
  int last_kept;   // the last kept token with a weight (-1: none)
};

constexpr Stats kNoStats{-INFINITY, 0.f, -INFINITY, INT_MAX, 0.f, -1};

__device__ __forceinline__ float rescale(float sum, float from, float to) {
  return from == -INFINITY ? 0.f : sum * expf(from - to);
}

__device__ __forceinline__ Stats merge(const Stats& a, const Stats& b) {
  Stats s;
  s.max = fmaxf(a.max, b.max);
  s.sum_all = rescale(a.sum_all, a.max, s.max) + rescale(b.sum_all, b.max, s.max);
  const bool take_b = b.best > a.best || (b.best == a.best && b.best_token < a.best_token);
  s.best = take_b ? b.best : a.best;
  s.best_token = take_b ? b.best_token : a.best_token;
  s.sum_kept = rescale(a.sum_kept, a.best, s.best) + rescale(b.sum_kept, b.best, s.best);
  s.last_kept = max(a.last_kept, b.last_kept);
  return s;
}

__device__ __forceinline__ Stats shuffle(const Stats& s, int offset) {
  Stats o;
  o.max = __shfl_xor_sync(0xffffffffu, s.max, offset);
  o.sum_all = __shfl_xor_sync(0xffffffffu, s.sum_all, offset);
  o.best = __shfl_xor_sync(0xffffffffu, s.best, offset);
  o.best_token = __shfl_xor_sync(0xffffffffu, s.best_token, offset);
  o.sum_kept = __shfl_xor_sync(0xffffffffu, s.sum_kept, offset);
  o.last_kept = __shfl_xor_sync(0xffffffffu, s.last_kept, offset);
  return o;
}

// The CTA's merged stats, in every thread.
__device__ Stats block_merge(Stats s) {
  __shared__ Stats warps[kThreads / 32];
  __shared__ Stats total;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) s = merge(s, shuffle(s, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warps[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < kThreads / 32 ? warps[lane] : kNoStats;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) s = merge(s, shuffle(s, offset));
    if (lane == 0) total = s;
  }
  __syncthreads();
  return total;
}

template <typename T, bool kVector>
__global__ void __launch_bounds__(kThreads)
    sample_kernel(const T* __restrict__ logits, int64_t row_stride, int batch, int vocab,
                  const double* __restrict__ params, const float* __restrict__ thresholds,
                  bool processed, int32_t* __restrict__ tokens, float* __restrict__ log_probs) {
  using BlockScan = cub::BlockScan<double, kThreads>;
  __shared__ typename BlockScan::TempStorage scan_storage;
  __shared__ int chosen;

  const int b = blockIdx.x;
  const double* uniforms = params;
  const double* temperatures = params + batch;
  const double* greedy = params + 2 * batch;
  const double* offsets = params + 3 * batch;
  const double* mask_tokens = params + 4 * batch + 1;
  const int mask_begin = static_cast<int>(offsets[b]);
  Row<T, kVector> row{
      logits + static_cast<int64_t>(b) * row_stride, vocab,
      static_cast<float>(temperatures[b]),           mask_tokens + mask_begin,
      static_cast<int>(offsets[b + 1]) - mask_begin, thresholds ? thresholds[b] : -INFINITY};

  // Pass 1: the statistics.
  Stats s = kNoStats;
  for (int base = 0; base < vocab; base += kTile) {
    const int first = base + threadIdx.x * kPack;
    float z[kPack];
    bool valid[kPack], unmasked[kPack];
    row.load(first, z, valid);
    float local = -INFINITY, local_best = -INFINITY;
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      unmasked[e] = valid[e] && !row.masked(first + e);
      local = fmaxf(local, z[e]);
      if (unmasked[e]) local_best = fmaxf(local_best, z[e]);
    }
    if (local > s.max) {
      s.sum_all = rescale(s.sum_all, s.max, local);
      s.max = local;
    }
    if (local_best > s.best) {
      s.sum_kept = rescale(s.sum_kept, s.best, local_best);
      s.best = local_best;
#pragma unroll
      for (int e = kPack - 1; e >= 0; --e)  // the first of ties
        if (unmasked[e] && z[e] == local_best) s.best_token = first + e;
    }
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      if (!valid[e]) continue;
      s.sum_all += s.max == -INFINITY ? 0.f : expf(z[e] - s.max);
      if (unmasked[e] && z[e] >= row.threshold && s.best != -INFINITY) {
        const float w = expf(z[e] - s.best);
        s.sum_kept += w;
        if (w > 0.f) s.last_kept = first + e;
      }
    }
  }
  s = block_merge(s);

  if (threadIdx.x == 0) chosen = INT_MAX;
  __syncthreads();
  if (greedy[b] != 0.0 || s.last_kept < 0) {
    if (threadIdx.x == 0) chosen = s.best_token == INT_MAX ? 0 : s.best_token;
  } else {
    // Pass 2: the draw, in token order.
    const double target = uniforms[b] * static_cast<double>(s.sum_kept);
    double offset = 0.0;
    for (int base = 0; base < vocab; base += kTile) {
      const int first = base + threadIdx.x * kPack;
      float z[kPack];
      bool valid[kPack];
      row.load(first, z, valid);
      float w[kPack];
      double mine = 0.0;
#pragma unroll
      for (int e = 0; e < kPack; ++e) {
        w[e] = valid[e] && row.kept(first + e, z[e]) ? expf(z[e] - s.best) : 0.f;
        mine += w[e];
      }
      double before = 0.0, tile_total = 0.0;
      BlockScan(scan_storage).ExclusiveSum(mine, before, tile_total);
      if (offset + tile_total > target) {
        const double start = offset + before;
        if (mine > 0.0 && start + mine > target) {
          // The first such thread holds the token; rounding may let a later one claim too.
          double running = start;
          int token = -1;
#pragma unroll
          for (int e = 0; e < kPack; ++e) {
            if (w[e] <= 0.f) continue;
            running += w[e];
            token = first + e;
            if (running > target) break;
          }
          atomicMin(&chosen, token);
        }
        __syncthreads();
        break;
      }
      offset += tile_total;
      __syncthreads();  // scan_storage is reused
    }
    __syncthreads();
    if (threadIdx.x == 0 && chosen == INT_MAX)
      chosen = s.last_kept;  // u * total rounded past the sum
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int token = chosen;
    const float z_token = __fdiv_rn(to_float(row.logits[token]), row.temperature);
    tokens[b] = token;
    // No kept token (every one masked) or NaN logits: a NaN the caller reports.
    log_probs[b] = s.last_kept < 0 || isnan(s.sum_all) ? NAN
                   : processed                         ? z_token - s.best - logf(s.sum_kept)
                                                       : z_token - s.max - logf(s.sum_all);
  }
}

template <typename T>
void launch(const SamplingLaunch& l, cudaStream_t stream) {
  const bool vector =
      reinterpret_cast<uintptr_t>(l.logits) % sizeof(Pack<T>) == 0 && l.row_stride % kPack == 0;
  auto kernel = vector ? sample_kernel<T, true> : sample_kernel<T, false>;
  kernel<<<l.batch, kThreads, 0, stream>>>(static_cast<const T*>(l.logits), l.row_stride, l.batch,
                                           l.vocab, l.params, l.thresholds, l.processed, l.tokens,
                                           l.log_probs);
}

}  // namespace

void sample_rows(const SamplingLaunch& l, void* stream) {
  if (l.batch == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (l.type) {
    case ElementType::kFloat:
      return launch<float>(l, s);
    case ElementType::kHalf:
      return launch<__half>(l, s);
    case ElementType::kBFloat16:
      return launch<__nv_bfloat16>(l, s);
  }
}

}  // namespace vime::cuda_kernels
