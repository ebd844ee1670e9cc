// vLLM's prompt_logprobs=N for the NativeEngine: at each prompt position after the first, the
// log-prob of the prompt token given the tokens before it, its rank, and the N most likely tokens
// there. Computed by a forward of the whole prompt of its own (the trainer's packed forward, not
// the engine's KV cache), so a prompt prefix found in the prefix cache is scored all the same.
#pragma once

#include <cstdint>
#include <vector>

#include "vime/engine/sampler.hpp"

namespace vime {
class Model;
}

namespace vime::engine {

struct PromptPosition {
  TokenLogProb token;             // the prompt token and its log-prob
  int64_t rank = 0;               // vLLM's: the tokens at least as likely, itself included
  std::vector<TokenLogProb> top;  // the count most likely, most likely first
};

struct PromptLogProbs {
  int64_t count = 0;                      // alternatives wanted per position (N)
  std::vector<PromptPosition> positions;  // [prompt length - 1]: positions 1.. of the prompt
};

struct PromptToScore {
  const std::vector<int32_t>* prompt = nullptr;  // at least 1 token
  // log_softmax(logits / temperature) over the whole vocabulary, in fp32: the trainer's log-probs
  // (train/log_probs.hpp), no top-k/top-p/min_p. Greedy requests (temperature ~ 0) use 1.
  double temperature = 1.0;
  PromptLogProbs* out = nullptr;
};

// Fills each out->positions; packs the prompts into forwards of at most `max_tokens` tokens
// (a longer prompt gets a forward of its own). Runs no collective: not under tensor parallelism.
void score_prompts(Model& model, const std::vector<PromptToScore>& prompts, int64_t max_tokens);

}  // namespace vime::engine
