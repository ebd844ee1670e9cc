// vime's own CUDA kernels for the engine's decode step over the paged KV cache (PagedKvCache's
// layout: [num_blocks, block_size, kv_heads, head_dim] per layer). Plain pointers and a
// cudaStream_t passed as void*, so this header needs neither ATen nor CUDA; the kernels are
// compiled only where LibTorch is a CUDA build (VIME_HAS_CUDA_KERNELS). They take fixed shapes
// and read lengths and block tables from device memory: no host sync, so CUDA graphs capture them.
#pragma once

#include <cstdint>

namespace vime::cuda_kernels {

enum class ElementType { kFloat, kHalf, kBFloat16 };

// Decode attention, one new token per sequence: out, q [batch, kv_heads * groups, head_dim]
// (contiguous); sequence b attends to positions [0, context_lens[b]) whose slots are
// block_tables[b * max_blocks + p / block_size] * block_size + p % block_size. Query heads
// j*groups .. (j+1)*groups-1 share kv head j. Softmax online in fp32; a length of 0 gives zeros.
// splits > 1: split-K, each row's context cut into up to `splits` ranges of at least
// kMinSplitPositions positions, merged by a second kernel; `workspace` then holds
// paged_decode_workspace_floats() fp32 (device). lanes_per_position: 32 (a warp reads one
// position at a time) or 16 (two, with half the shuffles per score); 0 picks 16 for head_dim 128
// with GQA groups of 3+ query heads (timed faster there), 32 otherwise. Returns false (launching
// nothing) for shapes it has no kernel for: head_dim other than 64 or 128, groups above 8, splits <
// 1, other lane counts.
bool paged_decode_attention(void* out, const void* q, const void* key_cache,
                            const void* value_cache, const int32_t* block_tables,
                            const int32_t* context_lens, int batch, int kv_heads, int groups,
                            int head_dim, int block_size, int max_blocks, float scale,
                            ElementType type, void* stream, int splits = 1,
                            float* workspace = nullptr, int lanes_per_position = 0);

inline int64_t paged_decode_workspace_floats(int64_t batch, int64_t heads, int64_t head_dim,
                                             int64_t splits) {
  return splits > 1 ? batch * heads * splits * (head_dim + 2) : 0;
}

inline constexpr int64_t kMaxDecodeSplits = 16;
inline constexpr int kMinSplitPositions = 256;  // the shortest range of a split row

// The split count for a launch: one CTA per (row, kv head) leaves SMs idle when batch * kv_heads
// is small against the device's `sm_count`, so the context is split into up to four CTAs per
// SM, as far as `max_positions` (the longest a row can be) allows ranges of
// kMinSplitPositions.
inline int choose_decode_splits(int64_t batch, int64_t kv_heads, int64_t max_positions,
                                int64_t sm_count) {
  const int64_t ctas = batch * kv_heads, wanted = 4 * sm_count;
  if (ctas <= 0) return 1;
  int64_t splits = wanted / ctas;
  splits = splits < kMaxDecodeSplits ? splits : kMaxDecodeSplits;
  const int64_t by_length = (max_positions + kMinSplitPositions - 1) / kMinSplitPositions;
  splits = splits < by_length ? splits : by_length;
  return static_cast<int>(splits < 1 ? 1 : splits);
}

// key_cache/value_cache slot slots[i] = k[i], v[i] ([tokens, kv_heads * head_dim] rows, row
// strides k_stride/v_stride in elements); a negative slot writes nothing (a padding row).
void paged_kv_write(void* key_cache, void* value_cache, const void* k, const void* v,
                    const int32_t* slots, int tokens, int row_elements, int64_t k_stride,
                    int64_t v_stride, ElementType type, void* stream);

}  // namespace vime::cuda_kernels
