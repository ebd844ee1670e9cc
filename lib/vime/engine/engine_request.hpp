// One request inside the NativeEngine: its resolved sampling settings, stop checker, incremental
// detokenizer, the output so far and the promise its caller waits on; made from a GenerateRequest
// (checked against the model) and ended with a response or an error.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vime/engine/native_engine.hpp"
#include "vime/engine/prompt_log_probs.hpp"
#include "vime/engine/row_sampling.hpp"
#include "vime/engine/stop_checker.hpp"
#include "vime/engine/token_callback.hpp"
#include "vime/engine_client.hpp"
#include "vime/tokenizer.hpp"

namespace vime::engine {

// The text each new output id adds: tokenizer::DecodeStream for vime's HfTokenizer, else the same
// prefix/read-offset scheme over Tokenizer::decode.
class TextStream {
 public:
  virtual ~TextStream() = default;
  virtual std::optional<std::string> step(int32_t id) = 0;
  static std::unique_ptr<TextStream> make(const Tokenizer& tokenizer, bool skip_special_tokens);
};

struct EngineRequest {
  std::vector<int32_t> prompt;
  std::vector<int32_t> sequence;  // prompt + output so far (the paged cache hashes its blocks)
  bool return_logprob = true;
  RowSampling sampling;
  std::unique_ptr<TextStream> text;
  std::unique_ptr<StopChecker> checker;
  std::vector<int32_t> output_ids;
  std::vector<float> log_probs;
  int64_t top_logprobs = 0;                    // alternatives wanted per position
  std::vector<std::vector<TokenLogProb>> top;  // [output position][alternative]
  TopLogProbs* top_out = nullptr;              // where they go when the request ends
  PromptLogProbs* prompt_out = nullptr;        // prompt_logprobs: scored before the first step
  bool prompt_scored = false;
  int64_t cached = 0;           // positions of this request in the KV cache (0: needs a prefill)
  std::vector<int32_t> blocks;  // paged cache: the block table (BlockManager)
  bool admitted = false;        // scheduled at least once (cached_tokens is counted then)
  bool finished = false;        // its response is out (the scheduler drops it after the step)
  int64_t cached_tokens = 0;    // prompt positions found in the prefix cache at admission
  bool return_routed_experts = false;
  // [positions computed so far][num_layers * topk]: the experts of each position the engine ran,
  // kept across preemptions (a recomputed position keeps its first routing).
  std::vector<int32_t> routed_experts;
  int64_t routed_width = 0;
  int64_t routed_rows() const {
    return routed_width == 0 ? 0 : static_cast<int64_t>(routed_experts.size()) / routed_width;
  }
  std::promise<GenerateResponse> promise;
  TokenCallback on_token;  // streaming requests only

  int64_t length() const { return static_cast<int64_t>(prompt.size() + output_ids.size()); }
  // Hands the caller its response (output so far, `reason`, weight `version`).
  void finish(const char* reason, const std::string& version);
};

// What a request is checked against and resolved with.
struct RequestLimits {
  int64_t vocab_size = 0;
  int64_t max_context = 0;  // prompt + output
  std::vector<int32_t> eos;
  const Tokenizer* tokenizer = nullptr;  // may be null (then no stop strings)
};

// Throws vime::Error for an invalid request (empty prompt, a prompt that fills the context, ids
// outside the vocabulary, unsupported or bad sampling params).
void check_request(const GenerateRequest& request, const RequestLimits& limits);
// A request check_request accepted; `fallback_seed`: the seed of a request that has none.
std::unique_ptr<EngineRequest> make_engine_request(const GenerateRequest& request,
                                                   const RequestLimits& limits,
                                                   uint64_t fallback_seed);

}  // namespace vime::engine
