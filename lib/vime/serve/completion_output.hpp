// What /v1/completions and /v1/chat/completions both make of a finished generation: the output
// text with vLLM's stop-string trimming and the stop_reason field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {

// The decoded output (skip_special_tokens as asked), cut before a matched stop string unless
// include_stop_str_in_output.
std::string output_text(const ServeContext& ctx, const GenerateResponse& r,
                        const SamplingParams& params);
// vLLM's stop_reason: the stop id or stop string that ended the request; null for EOS, length,
// abort.
Json stop_reason_of(const ServeContext& ctx, const GenerateResponse& r,
                    const SamplingParams& params);
// vLLM's prompt_logprobs field: null for the first prompt token, then at each position
// {"<token id>": {"logprob", "rank", "decoded_token"}} for the prompt token and the most likely
// ones (decoded_token "token_id:<id>" with `as_ids`). Null when the request ended before its
// prompt was scored (aborted).
Json prompt_logprobs_json(const ServeContext& ctx, const std::vector<int32_t>& prompt,
                          const engine::PromptLogProbs& scored, bool as_ids);
// stream_options.include_usage of a streaming request (stream_options without stream=true is a
// BadRequest, as in vLLM).
bool include_usage(const Json& body);

}  // namespace vime::serve
