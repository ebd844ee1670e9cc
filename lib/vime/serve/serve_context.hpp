// State shared by the routes of `vime serve`: the engine, tokenizer, options and the counters that
// /metrics reports, plus the helpers every route uses to read a request and answer in vLLM's
// shapes.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/serve/server.hpp"
#include "vime/tokenizer.hpp"

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

struct ServeContext {
  ServeContext(engine::NativeEngine& e, const Tokenizer& t, ServeOptions o)
      : engine(e), tokenizer(t), options(std::move(o)) {}

  engine::NativeEngine& engine;
  const Tokenizer& tokenizer;
  ServeOptions options;
  std::atomic<bool> paused{false};
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> next_id{0};

  std::mutex metrics_mutex;
  int64_t prompt_tokens_total = 0;
  int64_t generation_tokens_total = 0;
  std::map<std::string, int64_t> finished_by_reason;  // "stop" | "length" | "abort"

  // Runs one request through the engine and counts it for /metrics.
  GenerateResponse generate(const GenerateRequest& request);
};

// The parsed JSON body (an object); throws BadRequest otherwise.
Json parse_body(const httplib::Request& req);
void send_json(httplib::Response& res, const Json& body, int status = 200);
// {"error": {"message", "type", "param", "code"}} as recent vLLM answers.
void send_error(httplib::Response& res, int status, const std::string& message);

// vLLM's sampling fields of `fields` (a /v1/completions body or /inference/v1/generate's
// sampling_params) as vime's SamplingParams; throws BadRequest naming a bad field.
SamplingParams sampling_params_from(const Json& fields);
// Token ids of a JSON array, each in [0, vocab); throws BadRequest naming `field`.
std::vector<int32_t> token_ids_from(const Json& value, const std::string& field, int64_t vocab);
// "token_id:<id>" as vLLM writes a token with return_tokens_as_token_ids.
std::string token_id_label(int32_t id);
// A log-prob as vLLM sends it (clamped to >= -9999, no -inf in JSON).
double clamp_logprob(float logprob);
Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
std::string new_id(ServeContext& ctx, const char* prefix);

// One per route group (lib/vime/serve/*_routes.cpp).
void add_info_routes(httplib::Server& http, ServeContext& ctx);  // /health /v1/models /metrics
void add_completion_routes(httplib::Server& http, ServeContext& ctx);  // /v1/completions
void add_generate_routes(httplib::Server& http, ServeContext& ctx);    // /inference/v1/generate
void add_tokenize_routes(httplib::Server& http, ServeContext& ctx);    // /tokenize /detokenize
void add_control_routes(httplib::Server& http, ServeContext& ctx);     // pause, resume, ...

}  // namespace vime::serve
