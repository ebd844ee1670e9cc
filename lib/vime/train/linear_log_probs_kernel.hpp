// vime's CUDA kernels for the output head of linear_token_log_probs: one pass over a chunk's logits
// (the GEMM's output, in its own dtype, never an fp32 copy) for the log-probs, logsumexp and
// entropy, and one in-place pass that turns the recomputed logits into their gradient. Plain
// pointers and a cudaStream_t passed as void*, so this header needs neither ATen nor CUDA; the
// kernels are compiled only where LibTorch is a CUDA build (VIME_HAS_CUDA_KERNELS).
#pragma once

#include <cstdint>

namespace vime::cuda_kernels {

enum class LogitsType { kFloat, kHalf, kBFloat16 };

// logits: [rows, vocab] with row stride `ld` (elements); targets: [rows] int64. Writes, per row,
// with z = logits / temperature: lse = logsumexp(z), log_prob = z[target] - lse and (where
// `entropy` is not null) entropy = -sum softmax(z) * log softmax(z); online max/sum in fp32. A
// target outside [0, vocab) gives a NaN log-prob.
void linear_log_probs_forward(const void* logits, int64_t rows, int64_t vocab, int64_t ld,
                              const int64_t* targets, float temperature, float* log_probs,
                              float* lse, float* entropy, LogitsType type, void* stream);

// Overwrites logits (as above) with d(sum g_lp * log_prob + sum g_h * entropy)/d logits:
//   (g_lp * (onehot(target) - p) - g_h * p * (log p + entropy)) / temperature,
// p = softmax(logits / temperature) from the saved lse. grad_log_probs / grad_entropy (and
// entropy, needed with grad_entropy) may be null: that term is zero.
void linear_log_probs_backward(void* logits, int64_t rows, int64_t vocab, int64_t ld,
                               const int64_t* targets, float temperature, const float* lse,
                               const float* entropy, const float* grad_log_probs,
                               const float* grad_entropy, LogitsType type, void* stream);

}  // namespace vime::cuda_kernels
