// The NativeEngine's sampling step: one next token and its log-prob for every running request of a
// decode step, each row with its own settings, vectorised over the batch.
//
// Per row, in vLLM v1's order: fp32 logits -> min_new_tokens mask (EOS and stop ids cannot be
// sampled before the request has min_new_tokens tokens) -> / temperature -> min_p -> top_k ->
// top_p -> one draw. Greedy rows (temperature ~ 0) take the argmax of the masked logits.
//
// A draw uses one uniform u = philox(seed, step) and inverse-CDF sampling over the kept
// probabilities in token-id order, so a request's tokens depend only on its own logits, seed and
// step: never on the other rows of the batch or on the batch size.
//
// Two paths compute this. The CPU path, also the reference on CUDA (ATen: fp32 probabilities, a
// keep mask, an fp64 cumsum over the vocabulary), runs on the CPU and wherever the other is
// missing. On a CUDA build, CUDA
// logits go through vime's sampling kernel (sampling_kernel.hpp: two passes over the logits, no
// sort, nothing of the vocabulary's size written) with the filters as a cut on the logits found
// among top-k candidates (logits_filter.hpp's keep_threshold). Both draw with the same uniform in
// token order from the same distribution; they differ only in the rounding of the weights (exp(z -
// max z) against softmax), so a draw whose uniform falls within that rounding of a token boundary
// may pick the neighbouring token.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/engine/row_sampling.hpp"

namespace vime::engine {

// Which log-prob comes back with each token.
enum class LogProbMode {
  // log_softmax(logits / T) over the whole vocabulary, in fp32 (T = 1 for greedy rows): what the
  // trainer computes (train/log_probs.hpp) and what slime gets from SGLang, so that
  // train_rollout_logprob_abs_diff measures only numerics. Default.
  kTemperature,
  // vLLM's --logprobs-mode processed_logprobs: the log-prob under the distribution actually
  // sampled from (after the min_new_tokens mask, temperature, min_p, top_k, top_p, renormalised
  // over the kept tokens). Equals kTemperature when no filter or mask is active.
  kProcessed,
};

struct SamplerRow {
  const RowSampling* sampling = nullptr;  // not owned; outlives the call
  int64_t num_generated = 0;              // tokens the request has generated before this one
  int64_t top_logprobs = 0;               // alternatives wanted (vLLM's logprobs=N)
};

struct TokenLogProb {
  int32_t token_id = 0;
  float log_prob = 0;
};

struct SampledTokens {
  std::vector<int32_t> token_ids;  // [batch]
  std::vector<float> log_probs;    // [batch]
  // [batch][top_logprobs of the row]: the most likely tokens under the distribution log_probs
  // come from (the mode's), most likely first.
  std::vector<std::vector<TokenLogProb>> top;
};

enum class SamplerPath {
  kAuto,  // vime's CUDA sampling kernel for CUDA logits where the build has it, else kReference
  kReference,  // the CPU path (ATen) everywhere: the reference the kernel is compared with
};

// logits: [batch, vocab], fp32/bf16/fp16, any device; rows: one per logits row. Throws vime::Error
// naming the row when a row has nothing to sample (NaN logits, every token masked).
SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplerRow>& rows,
                            LogProbMode mode = LogProbMode::kTemperature,
                            SamplerPath path = SamplerPath::kAuto);

}  // namespace vime::engine
