// vime's CUDA kernel for rotary position embeddings (apply_rope in layers.hpp): one read and one
// write of q or k, in forward and in backward, instead of ATen's neg + cat + two muls + add. Plain
// pointers and a cudaStream_t passed as void*, so this header needs neither ATen nor CUDA; compiled
// only where LibTorch is a CUDA build (VIME_HAS_CUDA_KERNELS).
#pragma once

#include <cstdint>

namespace vime::cuda_kernels {

enum class RopeType { kFloat, kHalf, kBFloat16 };

// x, out: [tokens, heads, head_dim] contiguous; cos, sin: [tokens, head_dim] contiguous (one row
// per token, shared by the heads); head_dim even. With x = [a, b] (halves):
//   forward:  out = [a * cos1 - b * sin1, b * cos2 + a * sin2]    (x * cos + rotate_half(x) * sin)
//   backward: out = [a * cos1 + b * sin2, b * cos2 - a * sin1]    (its transpose, x the gradient)
// in fp32, rounded once. out may be x.
void rope(void* out, const void* x, const void* cos, const void* sin, int64_t tokens, int heads,
          int head_dim, bool backward, RopeType type, void* stream);

}  // namespace vime::cuda_kernels
