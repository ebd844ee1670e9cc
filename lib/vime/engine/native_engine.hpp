// The in-process rollout engine: generates with the very Model the trainer trains (the engine
// holds a Model&; the trainer updates the parameters in place while the engine is paused, so no
// weights are copied). One scheduler thread does continuous batching: it admits queued requests
// while rows are free, prefills them packed, and runs decode steps over every running request
// against a paged KV cache; requests join and leave the batch between steps. Each step is one
// forward over decode rows and prefill chunks together, at most max_prefill_tokens tokens; requests
// with a common prompt prefix share its cached blocks (a GRPO group prefills its prompt once);
// when the blocks run out the newest requests are preempted and recomputed later. Sampling is per
// request (engine::sample_tokens with per-request Philox seeds), so a request's tokens do not
// depend on the batch it ran in.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "vime/engine/native_engine_options.hpp"
#include "vime/engine/prompt_log_probs.hpp"
#include "vime/engine/sampler.hpp"
#include "vime/engine/token_callback.hpp"
#include "vime/engine_client.hpp"
#include "vime/tokenizer.hpp"

namespace vime {
class Model;
}

namespace vime::engine {

struct EngineStats {
  int64_t requests_finished = 0;
  int64_t generated_tokens = 0;
  int64_t prefill_tokens = 0;  // tokens run through prefill (re-prefills after release included)
  int64_t prefill_forwards = 0;
  int64_t decode_steps = 0;
  int64_t decode_tokens = 0;        // sum over decode steps of the batch size
  int64_t preempted = 0;            // requests sent back to the queue when the KV cache ran out
  int64_t out_of_memory_steps = 0;  // steps that ran out of device memory (all preempted)
  double prefill_seconds = 0;
  double decode_seconds = 0;
  int64_t running = 0;
  int64_t queued = 0;
  int64_t kv_cache_bytes = 0;
  // Paged KV cache: prompt positions found in the prefix cache (not prefilled), blocks allocated
  // and in use now, and blocks copied on write so far.
  int64_t prefix_cached_tokens = 0;
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_used = 0;
  int64_t kv_block_copies = 0;
  int64_t cuda_graphs = 0;  // decode CUDA graphs captured so far (recaptures included)
  // Where the paged steps' host time goes: issuing forwards (the device runs them meanwhile),
  // sampling (waits for the device), and under tensor parallelism posting each step's plan (TP
  // rank 0) or waiting for it (the other ranks, idle time included).
  double forward_seconds = 0;
  double sample_seconds = 0;
  double tp_plan_seconds = 0;
};

// The most likely tokens at each output position of a request (vLLM's logprobs=N), most likely
// first, under the distribution its log-probs come from.
struct TopLogProbs {
  int64_t count = 0;  // wanted per position
  std::vector<std::vector<TokenLogProb>> positions;
};

class NativeEngine final : public EngineClient {
 public:
  // `model` and `tokenizer` (for stop strings and EOS; may be null) must outlive the engine.
  NativeEngine(Model& model, const Tokenizer* tokenizer, NativeEngineOptions options = {});
  ~NativeEngine() override;  // aborts what is in flight, joins the thread
  NativeEngine(const NativeEngine&) = delete;
  NativeEngine& operator=(const NativeEngine&) = delete;

  // Blocking, thread-safe. Throws vime::Error for an invalid request (empty prompt, prompt that
  // fills the context, ids outside the vocabulary, bad sampling params); others are unaffected.
  GenerateResponse generate(const GenerateRequest& request) override;
  // generate() without the wait: queues the request and returns its result. `on_token` (may be
  // empty) sees each token as it is sampled; see TokenCallback. Throws as generate() does.
  // `top` (may be null) asks for top->count alternatives per position and receives them before the
  // future is ready; it must live until then. So does `prompt` (may be null): vLLM's
  // prompt_logprobs=prompt->count, scored at the request's temperature before it is scheduled
  // (prompt_log_probs.hpp). Not under tensor parallelism (throws).
  std::future<GenerateResponse> submit(const GenerateRequest& request, TokenCallback on_token,
                                       TopLogProbs* top = nullptr,
                                       PromptLogProbs* prompt = nullptr);
  GenerateResponse generate(const GenerateRequest& request, TopLogProbs* top,
                            PromptLogProbs* prompt = nullptr);
  // Every running and queued request ends with "abort", keeping its partial output; returns once
  // they have.
  void abort_all() override;
  // Returns after the current step: requests are held (new ones queue) until resume(), and the
  // model's parameters may be changed in place meanwhile (so the prefix cache is forgotten).
  void pause();
  void resume();
  // Frees the KV cache (the trainer runs now); held requests are prefilled again when they go on.
  void release_memory();
  // Forgets the cached prompt prefixes (vLLM's /reset_prefix_cache); running requests keep
  // their own blocks. Takes effect before the next step.
  void reset_prefix_cache();
  void set_weight_version(std::string version);  // responses carry it from now on
  EngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::engine
