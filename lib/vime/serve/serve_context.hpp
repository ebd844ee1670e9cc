// State shared by the routes of `vime serve`: the engine, tokenizer, options and the counters that
// /metrics reports, plus the helpers every route uses to read a request and answer in vLLM's
// shapes.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/serve/model_residency.hpp"
#include "vime/serve/request_body.hpp"
#include "vime/serve/server.hpp"
#include "vime/tokenizer.hpp"
#include "vime/weight_sync/weight_receiver.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vime::serve {

// Why the engine is held (paused): it runs only while no reason is set.
enum HoldReason : unsigned {
  kHoldUser = 1,     // /pause
  kHoldSleep = 2,    // /sleep
  kHoldWeights = 4,  // a weight update landing
};

struct ServeContext {
  ServeContext(engine::NativeEngine& e, Model& m, const Tokenizer& t, ServeOptions o)
      : engine(e), model(m), tokenizer(t), options(std::move(o)), residency(m) {}

  engine::NativeEngine& engine;
  Model& model;
  const Tokenizer& tokenizer;
  ServeOptions options;
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> next_id{0};

  std::mutex metrics_mutex;
  int64_t prompt_tokens_total = 0;
  int64_t generation_tokens_total = 0;
  std::map<std::string, int64_t> finished_by_reason;  // "stop" | "length" | "abort"
  int64_t weight_update_operations = 0;
  Json weight_version = nullptr;  // null until a finish/update_weight_version names one

  // Sleep and weight transfer: one at a time, under weights_mutex.
  std::mutex weights_mutex;
  ModelResidency residency;
  bool sleep_level0 = false;  // /sleep?level=0: scheduling paused, memory kept
  bool kv_asleep = false;
  std::unique_ptr<weight_sync::WeightReceiver> receiver;  // after /init_weight_transfer_engine
  bool update_started = false;  // between /start_ and /finish_weight_update

  // Runs one request through the engine and counts it for /metrics; `top` (may be null) gets the
  // top->count most likely tokens of each output position, `prompt` (may be null) the prompt's
  // log-probs (vLLM's prompt_logprobs; engine/prompt_log_probs.hpp).
  GenerateResponse generate(const GenerateRequest& request, engine::TopLogProbs* top = nullptr,
                            engine::PromptLogProbs* prompt = nullptr);
  // generate() for a streaming request: queues it with its token hook; the caller passes the
  // result to count() once it has it.
  std::future<GenerateResponse> submit(const GenerateRequest& request,
                                       engine::TokenCallback on_token);
  void count(const GenerateResponse& r);
  // Adds / drops a hold reason; the engine pauses on the first and resumes after the last.
  void hold(HoldReason reason);
  void release(HoldReason reason);
  bool held(HoldReason reason);
  // vLLM's pause modes before holding for `reason`: "wait" drains what is in flight first, "abort"
  // ends it ("abort" finish reason), "keep" freezes it. Throws BadRequest on another mode.
  void quiesce(const std::string& mode, HoldReason reason);
  bool is_sleeping() const;  // under weights_mutex
  void set_weight_version(const std::string& version);
  Json weight_version_json();

 private:
  std::mutex hold_mutex_;
  unsigned holds_ = 0;
};

// "token_id:<id>" as vLLM writes a token with return_tokens_as_token_ids.
std::string token_id_label(int32_t id);
// A log-prob as vLLM sends it (clamped to >= -9999, no -inf in JSON).
double clamp_logprob(float logprob);
Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
std::string new_id(ServeContext& ctx, const char* prefix);
// The response's weight_version field: the version the request ended under, null before any.
Json weight_version_of(const GenerateResponse& r);

// One per route group (lib/vime/serve/*_routes.cpp).
void add_info_routes(httplib::Server& http, ServeContext& ctx);  // /health /v1/models /metrics
void add_completion_routes(httplib::Server& http, ServeContext& ctx);  // /v1/completions
void add_chat_routes(httplib::Server& http, ServeContext& ctx);        // /v1/chat/completions
void add_generate_routes(httplib::Server& http, ServeContext& ctx);    // /inference/v1/generate
void add_tokenize_routes(httplib::Server& http, ServeContext& ctx);    // /tokenize /detokenize
void add_control_routes(httplib::Server& http, ServeContext& ctx);     // pause, resume, ...
void add_sleep_routes(httplib::Server& http, ServeContext& ctx);       // /sleep /wake_up ...
void add_weight_routes(httplib::Server& http, ServeContext& ctx);      // weight transfer, rpc

}  // namespace vime::serve
