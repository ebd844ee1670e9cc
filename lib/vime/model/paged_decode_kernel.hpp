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
// Returns false (launching nothing) for shapes it has no kernel for: head_dim other than 64 or
// 128, groups above 8.
bool paged_decode_attention(void* out, const void* q, const void* key_cache,
                            const void* value_cache, const int32_t* block_tables,
                            const int32_t* context_lens, int batch, int kv_heads, int groups,
                            int head_dim, int block_size, int max_blocks, float scale,
                            ElementType type, void* stream);

// key_cache/value_cache slot slots[i] = k[i], v[i] ([tokens, kv_heads * head_dim] rows, row
// strides k_stride/v_stride in elements); a negative slot writes nothing (a padding row).
void paged_kv_write(void* key_cache, void* value_cache, const void* k, const void* v,
                    const int32_t* slots, int tokens, int row_elements, int64_t k_stride,
                    int64_t v_stride, ElementType type, void* stream);

}  // namespace vime::cuda_kernels
