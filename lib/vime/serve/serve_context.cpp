#include "vime/serve/serve_context.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace vime::serve {

GenerateResponse ServeContext::generate(const GenerateRequest& request, engine::TopLogProbs* top,
                                        engine::PromptLogProbs* prompt) {
  if (stopping) throw Error("the server is shutting down");
  GenerateResponse r = engine.generate(request, top, prompt);
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
