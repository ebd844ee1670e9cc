// One running request's sampling settings as the sampler and the stop checker use them: the
// request's SamplingParams resolved against the model (EOS ids) and validated once, at admission.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/sampling_params.hpp"

namespace vime::engine {

// vLLM's _SAMPLING_EPS: a temperature below it means greedy decoding.
inline constexpr double kGreedyTemperature = 1e-5;

struct RowSampling {
  double temperature = 1.0;  // < kGreedyTemperature: greedy (top_k, top_p, min_p are then ignored)
  double top_p = 1.0;        // 1: off
  int64_t top_k = 0;         // <= 0: off
  double min_p = 0.0;        // 0: off; keep tokens with p >= min_p * max p
  uint64_t seed = 0;         // with the step, the only source of randomness for this row
  int64_t min_new_tokens = 0;
  int64_t max_new_tokens = 0;  // <= 0: no cap here (the engine's context length still applies)
  std::vector<int32_t> stop_token_ids;
  std::vector<int32_t> eos_token_ids;  // the model's; end the request unless ignore_eos
  bool ignore_eos = false;
  std::vector<std::string> stop;  // stop strings, matched on the decoded output text

  bool greedy() const { return temperature < kGreedyTemperature; }
  // The ids that end the request, and that min_new_tokens keeps from being sampled: the stop ids,
  // plus EOS unless ignore_eos.
  std::vector<int32_t> finishing_token_ids() const;
};

// Validates `params` (throws vime::Error naming the field) and resolves it: `extra` may carry
// vLLM's "min_p" and "ignore_eos"; a request without a seed gets `fallback_seed` (the engine draws
// one per request, so an unseeded request is still independent of the batch it runs in).
RowSampling make_row_sampling(const SamplingParams& params, std::vector<int32_t> eos_token_ids,
                              uint64_t fallback_seed);

}  // namespace vime::engine
