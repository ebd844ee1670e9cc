// The rollout engine as rollout functions and generate plugins see it: tokens in, tokens and
// post-temperature log-probs out. Implemented by the embedded NativeEngine and by VllmEngine
// (HTTP). Thread-safe; generate() blocks the calling worker thread until the request finishes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/sampling_params.hpp"

namespace vime {

struct GenerateRequest {
  std::vector<int32_t> input_ids;
  SamplingParams sampling_params;
  std::string session_id;  // routing key for consistent hashing
  bool return_logprob = true;
  // The samples of one GRPO group share it: an engine fleet keeps a group on one engine, so its
  // prompt is prefilled once there. Empty: no group (session_id routes).
  std::string group_id;
  // MoE models: return the experts every token was routed to (GenerateResponse::routed_experts),
  // for --use-rollout-routing-replay.
  bool return_routed_experts = false;
};

struct GenerateResponse {
  std::vector<int32_t> output_ids;
  std::vector<float>
      output_log_probs;       // [output_ids.size()], post-temperature (processed) log-probs
  std::string finish_reason;  // "stop" | "length" | "abort"
  std::string weight_version;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  // When asked: each MoE decoder layer's top-k experts of every position the engine ran, prompt
  // then output, [prompt + output - 1, num_layers, topk] row-major (slime's and SGLang's layout;
  // a dense layer's entries 0; the last output token was never fed back, so it has no row).
  std::vector<int32_t> routed_experts;
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  virtual GenerateResponse generate(const GenerateRequest& request) = 0;
  // Ends every request in flight with finish_reason "abort".
  virtual void abort_all() = 0;
};

}  // namespace vime
