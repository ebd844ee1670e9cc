// vime's CUDA kernels for RMSNorm (rms_norm in layers.hpp): forward one read of x and one write,
// keeping only rstd per row for backward; backward one kernel for the input's gradient that also
// sums the weight's gradient per block in fp32, and one small kernel adding those block sums in a
// fixed order (deterministic). Instead of ATen's fp32 copies and broadcast multiplies. Plain
// pointers and a cudaStream_t passed as void*, so this header needs neither ATen nor CUDA; compiled
// only where LibTorch is a CUDA build (VIME_HAS_CUDA_KERNELS).
#pragma once

#include <cstdint>

namespace vime::cuda_kernels {

enum class RmsNormType { kFloat, kHalf, kBFloat16 };

// The widest row the backward takes (one warp's fp32 copy of the weight's gradient in shared
// memory).
constexpr int64_t kRmsNormMaxDim = 16384;

// rows >= 1, 1 <= dim <= kRmsNormMaxDim.
// x, out: [rows, dim] contiguous, weight [dim], all of `type`; rstd: [rows] fp32. As HF computes
// it:
//   rstd = 1 / sqrt(mean(x^2) + eps)            (fp32)
//   out  = weight * to_type(x * rstd)           (normalized rounded to the type, then scaled in it)
void rms_norm_forward(void* out, float* rstd, const void* x, const void* weight, int64_t rows,
                      int64_t dim, float eps, RmsNormType type, void* stream);

// fp32 floats of the workspace rms_norm_backward needs for the weight's gradient.
int64_t rms_norm_backward_workspace(int64_t rows, int64_t dim);

// grad, x, grad_x: [rows, dim]; rstd from the forward. With n = x * rstd, gw = grad * weight:
//   grad_x      = rstd * (gw - n * mean(gw * n))    (fp32, rounded once)
//   grad_weight = sum over rows of grad * to_type(n), accumulated in fp32, rounded once
// grad_weight may be null (no weight gradient, no workspace needed).
void rms_norm_backward(void* grad_x, void* grad_weight, float* workspace, const void* grad,
                       const void* x, const void* weight, const float* rstd, int64_t rows,
                       int64_t dim, RmsNormType type, void* stream);

}  // namespace vime::cuda_kernels
