// The steps every multi-turn generate plugin repeats (slime's search-r1 and retool examples): start
// the sample's response afresh over the prompt's tokens, then per turn one engine call on the
// tokens so far whose output is appended as trainable tokens; the plugin appends its observations
// (loss mask 0) between turns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/engine_client.hpp"
#include "vime/generate_context.hpp"
#include "vime/sample.hpp"

namespace vime {

// Sets the sample's tokens to `prompt_ids` and clears its response, loss mask, log-probs and top-p
// record; the status is pending again (a retried sample starts clean).
void start_response(Sample& sample, std::vector<int32_t> prompt_ids);

struct TurnOutput {
  std::string text;           // the turn's tokens decoded (request's skip_special_tokens)
  std::string finish_reason;  // the engine's: "stop", "length" or "abort"
};

// One engine call on the sample's tokens (`request.input_ids` is set here). Its tokens and their
// log-probs are appended as trainable and its weight version recorded (with
// --use-rollout-routing-replay, the routed experts of the whole sequence too); an "abort" appends
// nothing and marks the sample aborted.
TurnOutput generate_turn(GenerateContext& ctx, Sample& sample, GenerateRequest& request);

}  // namespace vime
