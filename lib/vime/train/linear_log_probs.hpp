// Log-probabilities (and entropy) of tokens straight from the last hidden states and the output
// layer, chunk by chunk: the [tokens x vocab] logits never exist, in bf16 or fp32, in forward or
// backward (Liger's fused linear cross-entropy, for RL's log-probs). Each chunk's logits are one
// GEMM, turned into fp32 log-probs through a saved logsumexp; backward recomputes the chunk's GEMM
// and writes d/dhidden and d/dweight with two more GEMMs (d/dweight accumulated in fp32).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "vime/train/log_probs.hpp"

namespace vime::train {

// hidden: [total_tokens, hidden] (after the final norm); weight: [vocab, hidden] (the output layer,
// unpadded); rows: [num_rows] int64 indices into hidden (undefined: every row); targets:
// [num_rows]. Differentiable w.r.t. hidden and weight through both outputs; the entropy is computed
// only when `with_entropy` (log-prob passes need none) and is undefined otherwise.
TokenLogProbs linear_token_log_probs(const at::Tensor& hidden, const at::Tensor& weight,
                                     const at::Tensor& rows, const at::Tensor& targets,
                                     double temperature, int64_t chunk_rows, bool with_entropy);

}  // namespace vime::train
