// How `vime serve` reads a request body and answers an error: the JSON body, vLLM's sampling
// fields, the prompts of /v1/completions, the messages of /v1/chat/completions rendered and
// tokenized, token ids, and vLLM's error shape. Torch-free (no engine), so the fuzz harness
// tests/fuzz/fuzz_serve_request.cpp runs exactly these parsers under ASan+UBSan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/sampling_params.hpp"
#include "vime/tokenizer.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace vime::serve {

// An invalid request: answered 400 with vLLM's error body.
class BadRequest : public Error {
 public:
  explicit BadRequest(const std::string& message) : Error(message) {}
};

// The parsed JSON body (an object); throws BadRequest otherwise.
Json parse_body(std::string_view text);
Json parse_body(const httplib::Request& req);
// body[key] as a bool: `fallback` when absent or null; BadRequest naming the key when not a bool.
bool bool_field(const Json& body, std::string_view key, bool fallback = false);
void send_json(httplib::Response& res, const Json& body, int status = 200);
// {"error": {"message", "type", "param", "code"}} as recent vLLM answers.
void send_error(httplib::Response& res, int status, const std::string& message);

// The request's n (choices per prompt): 1 when absent; BadRequest outside [1, kMaxChoices].
inline constexpr int64_t kMaxChoices = 128;
int64_t choices_per_prompt(const Json& body);
// The sampling parameters of choice `choice` of n: a seeded request's choices draw with seed +
// choice, so they differ from one another and repeat from run to run.
SamplingParams params_of_choice(SamplingParams params, int64_t choice);

// vLLM's sampling fields of `fields` (a /v1/completions or /v1/chat/completions body, or
// /inference/v1/generate's sampling_params) as vime's SamplingParams; throws BadRequest naming a
// bad field. max_completion_tokens (chat) wins over max_tokens; without either, the request may
// generate `default_max_tokens` (vLLM: 16 for completions, the rest of the context for chat).
SamplingParams sampling_params_from(const Json& fields, int64_t default_max_tokens = 16);
// vLLM's prompt_logprobs of `fields` (as /v1/completions and /v1/chat/completions take it, or
// /inference/v1/generate's sampling_params): nullopt when absent or null, else the alternatives
// wanted per prompt position; BadRequest outside [0, 20] (vLLM's default --max-logprobs) or with
// stream=true (as vLLM answers).
std::optional<int64_t> prompt_logprobs_from(const Json& fields, bool stream = false);
// Token ids of a JSON array, each in [0, vocab); throws BadRequest naming `field`.
std::vector<int32_t> token_ids_from(const Json& value, const std::string& field, int64_t vocab);

// /v1/completions' prompt: a text, a list of token ids, or a list of either; each text checked
// against the context (check_prompt_bytes) before it is encoded. Throws BadRequest.
std::vector<std::vector<int32_t>> completion_prompts(const Tokenizer& tokenizer,
                                                     int64_t max_model_len, const Json& body);
// /v1/chat/completions' messages (roles checked, text parts joined) as the chat template takes
// them; throws BadRequest.
Json chat_messages(const Json& body);
// The chat's prompt: the messages (with tools, chat_template_kwargs, add_generation_prompt or
// continue_final_message) rendered by the tokenizer's chat template, checked against the
// context, then encoded. Throws BadRequest.
std::vector<int32_t> chat_prompt(const Tokenizer& tokenizer, int64_t max_model_len,
                                 const Json& body);

// The longest text one token of `tokenizer` decodes to, in bytes (computed once per tokenizer).
size_t max_token_bytes(const Tokenizer& tokenizer);
// Throws BadRequest when a text prompt of `bytes` bytes must hold more tokens than the context
// (max_model_len > 0): no token decodes to more than max_token_bytes(), so `bytes` needs at least
// bytes / max_token_bytes() tokens. Cheap: nothing is tokenized.
void check_prompt_bytes(const Tokenizer& tokenizer, int64_t max_model_len, size_t bytes,
                        std::string_view what);

}  // namespace vime::serve
