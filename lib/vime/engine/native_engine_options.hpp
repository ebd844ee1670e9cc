// What the embedded engine runs with: batch and context limits, sampling defaults, EOS ids. The
// flags fill a few fields (from); callers (vime serve's vLLM flags, benches) set the rest.
#pragma once

#include <cstdint>
#include <vector>

#include "vime/args.hpp"
#include "vime/engine/sampler.hpp"

namespace vime::engine {

struct NativeEngineOptions {
  int64_t max_running_requests = 256;  // sequences decoded together (continuous batch size)
  int64_t max_context_len = 0;         // prompt + output; 0: model max_position_embeddings
  int64_t max_prefill_tokens = 8192;   // tokens per prefill forward (a longer prompt runs alone)
  LogProbMode logprob_mode = LogProbMode::kTemperature;
  uint64_t seed = 42;                  // draws the seed of each request that has none
  std::vector<int32_t> eos_token_ids;  // empty: the tokenizer's EOS, if any
  // KV cache limit; 0: none. Rows that would not fit wait in the queue, and running requests
  // beyond it are preempted (newest first) and prefilled again later.
  int64_t max_kv_cache_bytes = 0;

  // --rollout-seed, --vllm-server-concurrency, --rollout-max-context-len.
  static NativeEngineOptions from(const Args& args);
};

}  // namespace vime::engine
