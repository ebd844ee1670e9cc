#include "vime/serve/serve_context.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace vime::serve {

GenerateResponse ServeContext::generate(const GenerateRequest& request) {
  if (stopping) throw Error("the server is shutting down");
  GenerateResponse r = engine.generate(request);
  count(r);
  return r;
}

std::future<GenerateResponse> ServeContext::submit(const GenerateRequest& request,
                                                   engine::TokenCallback on_token) {
  if (stopping) throw Error("the server is shutting down");
  return engine.submit(request, std::move(on_token));
}

void ServeContext::count(const GenerateResponse& r) {
  std::lock_guard<std::mutex> lock(metrics_mutex);
  prompt_tokens_total += r.prompt_tokens;
  generation_tokens_total += static_cast<int64_t>(r.output_ids.size());
  ++finished_by_reason[r.finish_reason];
}

void ServeContext::hold(HoldReason reason) {
  std::lock_guard<std::mutex> lock(hold_mutex_);
  holds_ |= reason;
  engine.pause();  // returns after the current step; a no-op wait when already paused
}

void ServeContext::release(HoldReason reason) {
  std::lock_guard<std::mutex> lock(hold_mutex_);
  holds_ &= ~static_cast<unsigned>(reason);
  if (holds_ == 0) engine.resume();
}

bool ServeContext::held(HoldReason reason) {
  std::lock_guard<std::mutex> lock(hold_mutex_);
  return (holds_ & reason) != 0;
}

void ServeContext::quiesce(const std::string& mode, HoldReason reason) {
  if (mode != "abort" && mode != "wait" && mode != "keep") {
    throw BadRequest("Invalid mode '" + mode + "'. Must be one of 'abort', 'wait', 'keep'.");
  }
  bool any_hold;
  {
    std::lock_guard<std::mutex> lock(hold_mutex_);
    any_hold = holds_ != 0;
  }
  if (mode == "wait" && !any_hold) {  // drain (a held engine has nothing it could finish)
    for (;;) {
      const auto s = engine.stats();
      if (s.running == 0 && s.queued == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  hold(reason);  // new requests queue from here on
  if (mode == "abort") engine.abort_all();
}

bool ServeContext::is_sleeping() const {
  return sleep_level0 || kv_asleep || residency.state() != ModelResidency::State::kResident;
}

void ServeContext::set_weight_version(const std::string& version) {
  engine.set_weight_version(version);
  std::lock_guard<std::mutex> lock(metrics_mutex);
  weight_version = version;
}

Json ServeContext::weight_version_json() {
  std::lock_guard<std::mutex> lock(metrics_mutex);
  return weight_version;
}

Json parse_body(const httplib::Request& req) {
  Json body;
  try {
    body = Json::parse(req.body, "request body");
  } catch (const Error& e) {
    throw BadRequest(e.what());
  }
  if (!body.is_object()) throw BadRequest("the request body must be a JSON object");
  return body;
}

bool bool_field(const Json& body, std::string_view key, bool fallback) {
  const Json* v = body.find(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_bool()) throw BadRequest(std::string(key) + " must be true or false");
  return v->as_bool();
}

void send_json(httplib::Response& res, const Json& body, int status) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  const char* type = status == 400   ? "BadRequestError"
                     : status == 404 ? "NotFoundError"
                     : status == 411 ? "LengthRequiredError"
                     : status == 413 ? "RequestEntityTooLargeError"
                     : status == 414 ? "RequestURITooLongError"
                     : status == 503 ? "ServiceUnavailableError"
                                     : "InternalServerError";
  Json error =
      Json::Object{{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}};
  send_json(res, Json::Object{{"error", error}}, status);
}

namespace {

const Json* present(const Json& fields, std::string_view key) {
  const Json* v = fields.find(key);
  return v && !v->is_null() ? v : nullptr;
}

template <class F>
auto field(const Json& fields, std::string_view key, F read) -> decltype(read(fields)) {
  try {
    return read(*present(fields, key));
  } catch (const Error& e) {
    throw BadRequest(std::string(key) + ": " + e.what());
  }
}

}  // namespace

SamplingParams sampling_params_from(const Json& f, int64_t default_max_tokens) {
  SamplingParams p;
  p.max_new_tokens = default_max_tokens;
  p.no_stop_trim = false;
  p.skip_special_tokens = true;
  auto num = [](const Json& v) { return v.as_double(); };
  auto integer = [](const Json& v) { return v.as_int(); };
  auto boolean = [](const Json& v) { return v.as_bool(); };
  if (present(f, "max_completion_tokens")) {
    p.max_new_tokens = field(f, "max_completion_tokens", integer);
    if (p.max_new_tokens < 1) throw BadRequest("max_completion_tokens must be at least 1");
  } else if (present(f, "max_tokens")) {
    p.max_new_tokens = field(f, "max_tokens", integer);
  }
  if (present(f, "min_tokens")) p.min_new_tokens = field(f, "min_tokens", integer);
  if (present(f, "temperature")) p.temperature = field(f, "temperature", num);
  if (present(f, "top_p")) p.top_p = field(f, "top_p", num);
  if (present(f, "top_k")) p.top_k = field(f, "top_k", integer);
  if (p.top_k == 0) p.top_k = -1;  // vLLM: 0 or -1 disables top-k
  if (present(f, "repetition_penalty")) {
    p.repetition_penalty = field(f, "repetition_penalty", num);
  }
  if (present(f, "seed")) p.seed = field(f, "seed", integer);
  if (present(f, "skip_special_tokens")) {
    p.skip_special_tokens = field(f, "skip_special_tokens", boolean);
  }
  if (present(f, "include_stop_str_in_output")) {
    p.no_stop_trim = field(f, "include_stop_str_in_output", boolean);
  }
  if (const Json* stop = present(f, "stop")) {
    if (stop->is_string()) {
      p.stop.push_back(stop->as_string());
    } else {
      field(f, "stop", [&](const Json& v) {
        for (const auto& s : v.as_array()) p.stop.push_back(s.as_string());
        return 0;
      });
    }
  }
  if (present(f, "stop_token_ids")) {
    field(f, "stop_token_ids", [&](const Json& v) {
      for (const auto& id : v.as_array())
        p.stop_token_ids.push_back(static_cast<int32_t>(id.as_int()));
      return 0;
    });
  }
  if (p.max_new_tokens < 1) throw BadRequest("max_tokens must be at least 1");
  if (p.min_new_tokens < 0 || p.min_new_tokens > p.max_new_tokens) {
    throw BadRequest("min_tokens must be in [0, max_tokens]");
  }
  if (p.temperature < 0) throw BadRequest("temperature must be non-negative");
  if (!(p.top_p > 0 && p.top_p <= 1)) throw BadRequest("top_p must be in (0, 1]");
  if (p.top_k < -1) throw BadRequest("top_k must be -1 (disable), or at least 1");
  for (const char* key : {"min_p", "ignore_eos"}) {  // the engine reads these from `extra`
    if (const Json* v = present(f, key)) p.extra[key] = *v;
  }
  // vime returns the sampled token's log-prob only; top-N alternatives are not computed.
  if (present(f, "logprobs") && field(f, "logprobs", integer) < -1) {
    throw BadRequest("logprobs must be -1 or non-negative");
  }
  return p;
}

int64_t choices_per_prompt(const Json& body) {
  const Json* n = body.find("n");
  if (!n || n->is_null()) return 1;
  if (!n->is_int() || n->as_int() < 1 || n->as_int() > kMaxChoices) {
    throw BadRequest("n must be an integer in [1, " + std::to_string(kMaxChoices) + "]");
  }
  return n->as_int();
}

SamplingParams params_of_choice(SamplingParams params, int64_t choice) {
  if (params.seed) *params.seed += choice;
  return params;
}

std::vector<int32_t> token_ids_from(const Json& value, const std::string& name, int64_t vocab) {
  if (!value.is_array() || value.size() == 0) {
    throw BadRequest(name + " must be a non-empty list of token ids");
  }
  std::vector<int32_t> ids;
  for (const auto& v : value.as_array()) {
    if (!v.is_int() || v.as_int() < 0 || v.as_int() >= vocab) {
      throw BadRequest(name + " holds " + v.dump() + ", not a token id in [0, " +
                       std::to_string(vocab) + ")");
    }
    ids.push_back(static_cast<int32_t>(v.as_int()));
  }
  return ids;
}

std::string token_id_label(int32_t id) { return "token_id:" + std::to_string(id); }

double clamp_logprob(float logprob) { return std::max(static_cast<double>(logprob), -9999.0); }

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return Json::Object{{"prompt_tokens", prompt_tokens},
                      {"completion_tokens", completion_tokens},
                      {"total_tokens", prompt_tokens + completion_tokens},
                      {"prompt_tokens_details", Json::Object{{"cached_tokens", cached_tokens}}}};
}

std::string new_id(ServeContext& ctx, const char* prefix) {
  return std::string(prefix) + std::to_string(++ctx.next_id);
}

Json weight_version_of(const GenerateResponse& r) {
  return r.weight_version.empty() ? Json(nullptr) : Json(r.weight_version);
}

}  // namespace vime::serve
