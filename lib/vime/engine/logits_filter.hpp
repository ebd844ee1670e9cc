// Which tokens top-k, top-p and min-p leave to sample from, for a batch of rows with their own
// settings, vectorised on the probabilities' device.
//
// Each filter keeps every token whose probability reaches a per-row threshold, so ties at a
// boundary are all kept (as HF's and vLLM's top-k do) and the kept set never depends on sort order:
//   min_p: p >= min_p * max p                          (vLLM: applied first)
//   top_k: p >= the k-th largest p                      (after min_p)
//   top_p: the smallest prefix of the survivors, sorted by p descending, whose mass reaches
//          top_p of theirs (renormalised, as vLLM does after top-k), widened to its ties.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime::engine {

struct RowFilter {
  int64_t top_k = 0;   // <= 0 or >= vocab: off
  double top_p = 1.0;  // >= 1: off
  double min_p = 0.0;  // <= 0: off
  bool active() const { return top_k > 0 || top_p < 1.0 || min_p > 0.0; }
};

// probs: [batch, vocab] fp32, each row a distribution (zeros allowed). Returns [batch, vocab] bool:
// true where the token survives its row's filters (every token of a row without filters).
at::Tensor keep_mask(const at::Tensor& probs, const std::vector<RowFilter>& filters);

// The same filters as a cut on the logits: z [batch, vocab] fp32 (logits / temperature, masked
// tokens at -inf). Returns [batch] fp32: the row keeps the tokens with z >= its value (-inf for a
// row without filters). The candidates come from a top-k of z (k = the largest top_k, at least
// 1024 where top-p is on), not a sort of the vocabulary: min_p keeps z >= max z + log(min_p), top_k
// cuts at the k-th largest z, top-p at the last z of its prefix (probabilities exp(z - logsumexp
// z)); the whole row is sorted only when some row's top-p prefix reaches past the candidates.
// Equals keep_mask on probs = softmax(z) up to the rounding of the probabilities (a token whose
// probability ties the boundary's only after rounding may fall on the other side).
at::Tensor keep_threshold(const at::Tensor& z, const std::vector<RowFilter>& filters);

}  // namespace vime::engine
