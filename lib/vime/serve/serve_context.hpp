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
#include "vime/serve/server.hpp"
#include "vime/tokenizer.hpp"
#include "vime/weight_sync/weight_receiver.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vime::serve {

// An invalid request: answered 400 with vLLM's error body.
class BadRequest : public Error {
 public:
  explicit BadRequest(const std::string& message) : Error(message) {}
};

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

  // Runs one request through the engine and counts it for /metrics.
  GenerateResponse generate(const GenerateRequest& request);
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

// The parsed JSON body (an object); throws BadRequest otherwise.
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
// Token ids of a JSON array, each in [0, vocab); throws BadRequest naming `field`.
std::vector<int32_t> token_ids_from(const Json& value, const std::string& field, int64_t vocab);
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
