// POST /v1/completions (vLLM's CompletionRequest/CompletionResponse, non-streaming, n=1): prompts
// as token ids, lists of them, text or lists of texts; one choice per prompt, numbered in order.
#include <httplib.h>

#include <ctime>
#include <future>

#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

std::vector<std::vector<int32_t>> prompts_of(const ServeContext& ctx, const Json& body) {
  const Json* prompt = body.find("prompt");
  if (!prompt || prompt->is_null()) throw BadRequest("prompt is required");
  const int64_t vocab = ctx.tokenizer.vocab_size();
  bool add_special = true;
  if (const Json* a = body.find("add_special_tokens"); a && a->is_bool())
    add_special = a->as_bool();
  auto encode = [&](const Json& text) {
    auto ids = ctx.tokenizer.encode(text.as_string(), add_special);
    if (ids.empty()) throw BadRequest("prompt encodes to no tokens");
    return ids;
  };
  if (prompt->is_string()) return {encode(*prompt)};
  if (!prompt->is_array() || prompt->size() == 0) {
    throw BadRequest("prompt must be a string, a list of token ids, or a list of either");
  }
  const Json& first = prompt->at(size_t{0});
  if (first.is_int()) return {token_ids_from(*prompt, "prompt", vocab)};
  std::vector<std::vector<int32_t>> out;
  for (const auto& p : prompt->as_array()) {
    if (p.is_string()) {
      out.push_back(encode(p));
    } else {
      out.push_back(token_ids_from(p, "prompt", vocab));
    }
  }
  return out;
}

Json stop_reason_of(const GenerateResponse& r, const SamplingParams& p, const std::string& text) {
  if (r.finish_reason != "stop") return nullptr;
  if (!r.output_ids.empty()) {
    for (int32_t id : p.stop_token_ids)
      if (id == r.output_ids.back()) return static_cast<int64_t>(id);
  }
  for (const auto& s : p.stop)
    if (!s.empty() && text.find(s) != std::string::npos) return s;
  return nullptr;  // EOS
}

Json completion_logprobs(const ServeContext& ctx, const GenerateResponse& r, bool as_ids) {
  Json offsets = Json::array(), logprobs = Json::array(), tokens = Json::array(),
       top = Json::array();
  int64_t offset = 0;
  for (size_t i = 0; i < r.output_ids.size(); ++i) {
    const int32_t id = r.output_ids[i];
    const std::string token =
        as_ids ? token_id_label(id) : ctx.tokenizer.decode(std::span<const int32_t>(&id, 1));
    const Json lp =
        i < r.output_log_probs.size() ? Json(clamp_logprob(r.output_log_probs[i])) : Json(nullptr);
    offsets.push_back(offset);
    offset += static_cast<int64_t>(token.size());
    logprobs.push_back(lp);
    tokens.push_back(token);
    top.push_back(Json::Object{{token, lp}});  // the sampled token only
  }
  return Json::Object{{"text_offset", offsets},
                      {"token_logprobs", logprobs},
                      {"tokens", tokens},
                      {"top_logprobs", top}};
}

std::string text_of(const ServeContext& ctx, const GenerateResponse& r, const SamplingParams& p) {
  std::string text = ctx.tokenizer.decode(r.output_ids, p.skip_special_tokens);
  if (r.finish_reason == "stop" && !p.no_stop_trim) {
    for (const auto& s : p.stop) {
      if (auto at = text.find(s); !s.empty() && at != std::string::npos) text.resize(at);
    }
  }
  return text;
}

void completions(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  if (const Json* s = body.find("stream"); s && s->is_bool() && s->as_bool()) {
    throw BadRequest("stream: streaming is not supported by vime serve");
  }
  const SamplingParams params = sampling_params_from(body);
  const auto prompts = prompts_of(ctx, body);
  const Json* logprobs = body.find("logprobs");
  const bool want_logprobs = logprobs && !logprobs->is_null();
  auto flag = [&](const char* key) {
    const Json* v = body.find(key);
    return v && v->is_bool() && v->as_bool();
  };
  const bool as_ids = flag("return_tokens_as_token_ids"), return_ids = flag("return_token_ids");
  std::string request_id = new_id(ctx, "cmpl-");
  if (const Json* id = body.find("request_id"); id && id->is_string()) {
    request_id = "cmpl-" + id->as_string();
  }

  std::vector<std::future<GenerateResponse>> pending;  // batched together by the engine
  for (const auto& ids : prompts) {
    GenerateRequest g{ids, params, request_id, true};
    pending.push_back(std::async(std::launch::async, [&ctx, g] { return ctx.generate(g); }));
  }
  Json choices = Json::array();
  int64_t prompt_tokens = 0, completion_tokens = 0, cached = 0;
  Json weight_version = nullptr;
  for (size_t i = 0; i < pending.size(); ++i) {
    const GenerateResponse r = pending[i].get();
    const std::string text = text_of(ctx, r, params);
    Json choice = Json::object();
    choice["index"] = static_cast<int64_t>(i);
    choice["text"] = text;
    choice["logprobs"] = want_logprobs ? completion_logprobs(ctx, r, as_ids) : Json(nullptr);
    choice["finish_reason"] = r.finish_reason;
    choice["stop_reason"] = stop_reason_of(r, params, ctx.tokenizer.decode(r.output_ids));
    choice["token_ids"] = return_ids ? Json(r.output_ids) : Json(nullptr);
    choice["prompt_token_ids"] = return_ids ? Json(prompts[i]) : Json(nullptr);
    choice["prompt_logprobs"] = nullptr;
    choices.push_back(std::move(choice));
    prompt_tokens += static_cast<int64_t>(prompts[i].size());
    completion_tokens += static_cast<int64_t>(r.output_ids.size());
    cached += r.cached_tokens;
    weight_version = weight_version_of(r);  // the weights of the choice that ended last
  }
  Json out = Json::object();
  out["id"] = request_id;
  out["object"] = "text_completion";
  out["created"] = static_cast<int64_t>(std::time(nullptr));
  out["model"] = ctx.options.model_name;
  out["choices"] = std::move(choices);
  out["usage"] = usage_json(prompt_tokens, completion_tokens, cached);
  out["system_fingerprint"] = nullptr;
  out["kv_transfer_params"] = nullptr;
  out["weight_version"] = weight_version;
  send_json(res, out);
}

}  // namespace

void add_completion_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    completions(ctx, req, res);
  });
}

}  // namespace vime::serve
