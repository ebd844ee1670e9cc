// The expert MLPs' matrix products as one grouped GEMM: rows sorted by group, each contiguous
// segment multiplied by its group's weight. On CUDA with LibTorch >= 2.8 one at::_grouped_mm call
// (offsets stay on the device, so it runs inside a CUDA graph); elsewhere, and for shapes or dtypes
// it does not take (fp32, pre-Hopper GPUs, unaligned widths), a loop of at::mm over the non-empty
// segments (reads the offsets on the host).
#pragma once

#include <ATen/core/Tensor.h>

namespace vime {

// x: [rows, in]; weight: [groups, out, in] (each group in HF's [out, in] layout); offsets: [groups]
// int32 on x's device, the end row of each group's segment (a cumulative sum of the group sizes,
// the last equal to rows). Returns [rows, out]: row r of group g is weight[g] @ x[r]. Autograd
// flows to x and weight.
at::Tensor grouped_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& offsets);

// Whether grouped_linear takes the single-kernel path for these operands (for tests and the
// engine's CUDA-graph decision).
bool grouped_linear_is_fused(const at::Tensor& x, const at::Tensor& weight);

}  // namespace vime
