// vime's default generate (slime/rollout/sglang_rollout.py::generate): one request to the
// engine per sample, continuing from sample.tokens when a partial rollout resumes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/eval/eval_dataset_config.hpp"
#include "vime/generate_context.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/sample.hpp"
#include "vime/sampling_params.hpp"
#include "vime/tokenizer.hpp"

namespace vime::rollout {

// --rollout-temperature/top-p/top-k/stop/stop-token-ids/skip-special-tokens, max_new_tokens =
// --rollout-max-response-len (UsageError when unset), no_stop_trim, no spaces between specials.
SamplingParams rollout_sampling_params(const RolloutOptions& options);
// The same for one eval dataset: its resolved temperature, top_p, top_k, max_response_len, stop,
// stop_token_ids, min_new_tokens and the optional repetition_penalty / skip_special_tokens fields.
SamplingParams eval_sampling_params(const RolloutOptions& options,
                                    const eval::EvalDatasetConfig& config);

// sample.tokens when set (a partial rollout resumes), else encode(prompt) without special tokens;
// a chat-message prompt is rendered with the chat template first (tools from metadata["tools"],
// sample.apply_chat_template_kwargs).
std::vector<int32_t> prompt_input_ids(const Tokenizer& tokenizer, const Sample& sample);

// A random RFC 4122 version-4 UUID ("3f1c...-4...").
std::string new_session_id();

// Generates the rest of `sample`: max_new_tokens is reduced by what was already generated (0 ->
// TRUNCATED without a request); the response tokens, log-probs and decoded text are appended,
// the status follows the finish reason, the weight version and prefix-cache counts are recorded.
// With `mask_earlier_tokens` (--partial-rollout with --mask-offpolicy-in-partial-rollout), tokens
// from an earlier rollout get mask 0. Engine errors propagate.
Sample default_generate(GenerateContext& ctx, Sample sample, const SamplingParams& params,
                        bool mask_earlier_tokens);

}  // namespace vime::rollout
