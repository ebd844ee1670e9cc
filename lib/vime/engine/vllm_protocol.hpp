// vLLM's generation wire format as pure functions (no I/O, no torch): a GenerateRequest as the
// body of POST /inference/v1/generate or POST /v1/completions, and either response as a
// GenerateResponse, as slime's vllm_rollout.py sends and reads them.
#pragma once

#include <string>

#include "vime/engine_client.hpp"
#include "vime/json.hpp"

namespace vime::engine {

// vLLM's sampling_params: vime's fields under vLLM's names (max_tokens, min_tokens,
// include_stop_str_in_output = no_stop_trim, ...; logprobs 0 when return_logprob), then
// SamplingParams.extra merged verbatim (extra wins).
Json vllm_sampling_params(const GenerateRequest& request);

// {"token_ids", "sampling_params"[, "model"]} for /inference/v1/generate.
Json generate_body(const GenerateRequest& request, const std::string& model);

// The same request as a /v1/completions body: prompt = ids, the sampling fields at the top level,
// return_token_ids and return_tokens_as_token_ids so the ids come back verbatim.
Json completions_body(const GenerateRequest& request, const std::string& model);

// vLLM's finish_reason as vime reports it: length -> "length", abort/cancelled -> "abort",
// "error" -> "error" (the caller retries), anything else (stop, repetition, null) -> "stop".
std::string map_finish_reason(const Json& finish_reason);

// Parses either response shape (choices[0].token_ids with logprobs.content[k].logprob or
// logprobs.token_logprobs[k]). Log-probs are padded/truncated to the token count; a missing or
// null log-prob is NaN (visible downstream, never mistaken for a real value). weight_version is
// read from the top level or choices[0] when present; routed_experts from choices[0] (vLLM) or
// meta_info (SGLang), decoded as routed_experts.hpp says. Throws vime::Error naming `where` for a
// body that is not one of these shapes.
GenerateResponse parse_generate_response(const Json& body, const std::string& where);

// The message of a vLLM error body: {"error": {"message": ...}}, {"error": "..."}, flat
// {"object": "error", "message": ...}, or FastAPI's {"detail": ...}; empty when none of these.
std::string vllm_error_message(const Json& body);

}  // namespace vime::engine
