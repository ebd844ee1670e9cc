// Log-probabilities and entropy of tokens from logits, in fp32 and in chunks of rows, so that a
// 150k vocabulary never needs a full fp32 copy of the logits: neither in forward nor in backward
// (a custom autograd node recomputes each chunk's softmax).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/model/tensor_parallel.hpp"

namespace vime::train {

struct TokenLogProbs {
  at::Tensor log_probs;  // [num_rows] fp32: log softmax(logits[row] / T)[target]
  at::Tensor entropy;    // [num_rows] fp32: H(softmax(logits[row] / T))
};

// logits: [total_tokens, vocab] (any float dtype); rows: [num_rows] int64 indices into logits
// (undefined: every row); targets: [num_rows] int64. Differentiable w.r.t. logits through both
// outputs.
TokenLogProbs token_log_probs(const at::Tensor& logits, const at::Tensor& rows,
                              const at::Tensor& targets, double temperature,
                              int64_t chunk_rows = 1024);

// The same from vocab-parallel logits (Megatron's vocab_parallel_cross_entropy): `local_logits`
// [total_tokens, V / tp.size] are this rank's columns [tp.rank * V / tp.size, ...) of the padded
// vocabulary; columns >= vocab_size (padding) are left out of the softmax. The full logits are
// never gathered: per chunk, the row max (all-reduce max) and the softmax sum, the target's logit
// and sum(p * z) (one all-reduce sum). Backward needs no collective (the log-normaliser and the
// entropy are kept). Every rank of the group gets the same values.
TokenLogProbs vocab_parallel_token_log_probs(const at::Tensor& local_logits, const at::Tensor& rows,
                                             const at::Tensor& targets, double temperature,
                                             int64_t vocab_size, const TensorParallel& tp,
                                             int64_t chunk_rows = 1024);

// For a packed batch: the logits row that predicts each response token (row t-1 predicts token t)
// and that token, for every sample. total_lengths/response_lengths per sample, in packing order.
struct ResponseRows {
  at::Tensor rows;     // [Σ response_lengths] int64
  at::Tensor targets;  // [Σ response_lengths] int64
};
ResponseRows response_rows(const at::Tensor& tokens, const std::vector<int64_t>& total_lengths,
                           const std::vector<int64_t>& response_lengths);

}  // namespace vime::train
