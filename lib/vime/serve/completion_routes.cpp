// POST /v1/completions (vLLM's CompletionRequest/CompletionResponse): prompts as token ids,
// lists of them, text or lists of texts; one choice per prompt, numbered in order. stream=true
// (one prompt) answers with text_completion chunks as the engine decodes.
#include <httplib.h>

#include <ctime>
#include <deque>
#include <future>
#include <optional>
#include <span>

#include "vime/serve/completion_output.hpp"
#include "vime/serve/event_stream.hpp"
#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

// vLLM's completion logprobs for the tokens `ids` (text_offset continues from `offset`): at each
// position top_logprobs maps the engine's most likely tokens (`alternatives`, one list per token;
// none for logprobs=0) and the sampled one to their log-probs.
Json completion_logprobs(const ServeContext& ctx, std::span<const int32_t> ids,
                         std::span<const float> log_probs, bool as_ids, int64_t& offset,
                         std::span<const std::vector<engine::TokenLogProb>> alternatives = {}) {
  Json offsets = Json::array(), logprobs = Json::array(), tokens = Json::array(),
       top = Json::array();
  auto label = [&](int32_t id) {
    return as_ids ? token_id_label(id) : ctx.tokenizer.decode(std::span<const int32_t>(&id, 1));
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string token = label(ids[i]);
    const Json lp = i < log_probs.size() ? Json(clamp_logprob(log_probs[i])) : Json(nullptr);
    offsets.push_back(offset);
    offset += static_cast<int64_t>(token.size());
    logprobs.push_back(lp);
    tokens.push_back(token);
    Json entry = Json::object();
    if (i < alternatives.size())
      for (const auto& t : alternatives[i]) entry[label(t.token_id)] = clamp_logprob(t.log_prob);
    if (!entry.find(token)) entry[token] = lp;  // the sampled token is always there
    top.push_back(std::move(entry));
  }
  return Json::Object{{"text_offset", offsets},
                      {"token_logprobs", logprobs},
                      {"tokens", tokens},
                      {"top_logprobs", top}};
}

struct Options {
  SamplingParams params;
  bool want_logprobs, as_ids, return_ids;
  int64_t top_logprobs = 0;                // logprobs=N
  std::optional<int64_t> prompt_logprobs;  // prompt_logprobs=N
  std::string id;
  int64_t created;
};

// stream=true: text_completion chunks, then a usage chunk with stream_options.include_usage.
void stream_completion(ServeContext& ctx, const Options& o, bool usage,
                       const std::vector<int32_t>& prompt, httplib::Response& res) {
  auto chunk = [&ctx, o, usage, offset = int64_t{0}](const StreamPiece& p) mutable {
    Json choice = Json::object();
    choice["index"] = 0;
    choice["text"] = p.text;
    choice["logprobs"] = o.want_logprobs
                             ? completion_logprobs(ctx, p.ids, p.log_probs, o.as_ids, offset)
                             : Json(nullptr);
    choice["finish_reason"] = p.end ? Json(p.end->finish_reason) : Json(nullptr);
    choice["stop_reason"] = p.end ? stop_reason_of(ctx, *p.end, o.params) : Json(nullptr);
    if (o.return_ids) choice["token_ids"] = std::vector<int32_t>(p.ids.begin(), p.ids.end());
    Json out = Json::Object{{"id", o.id},
                            {"object", "text_completion"},
                            {"created", o.created},
                            {"model", ctx.options.model_name},
                            {"choices", Json::Array{choice}}};
    if (usage) out["usage"] = nullptr;
    return out;
  };
  StreamFormat format;
  format.chunk = chunk;
  format.every_token = o.want_logprobs || o.return_ids;
  if (usage) {
    format.last = [&ctx, o, n = static_cast<int64_t>(prompt.size())](const GenerateResponse& r) {
      return std::vector<Json>{Json::Object{
          {"id", o.id},
          {"object", "text_completion"},
          {"created", o.created},
          {"model", ctx.options.model_name},
          {"choices", Json::array()},
          {"usage", usage_json(n, static_cast<int64_t>(r.output_ids.size()), r.cached_tokens)}}};
    };
  }
  stream_generation(
      ctx, res,
      GenerateRequest{
          .input_ids = prompt, .sampling_params = o.params, .session_id = o.id, .group_id = {}},
      std::move(format));
}

void completions(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  Options o;
  o.params = sampling_params_from(body);
  o.prompt_logprobs = prompt_logprobs_from(body, bool_field(body, "stream"));
  const auto prompts = completion_prompts(ctx.tokenizer, ctx.options.max_model_len, body);
  const Json* logprobs = body.find("logprobs");
  o.want_logprobs = logprobs && !logprobs->is_null();
  if (o.want_logprobs) o.top_logprobs = logprobs->as_int();
  o.as_ids = bool_field(body, "return_tokens_as_token_ids");
  o.return_ids = bool_field(body, "return_token_ids");
  o.id = new_id(ctx, "cmpl-");
  if (const Json* id = body.find("request_id"); id && id->is_string()) {
    o.id = "cmpl-" + id->as_string();
  }
  o.created = static_cast<int64_t>(std::time(nullptr));
  const SamplingParams& params = o.params;
  const std::string& request_id = o.id;
  const bool usage = include_usage(body);
  const int64_t n = choices_per_prompt(body);
  if (bool_field(body, "stream")) {
    if (prompts.size() != 1) throw BadRequest("stream: vime serve streams one prompt at a time");
    if (n != 1) throw BadRequest("stream: vime serve streams one choice (n=1) at a time");
    if (o.top_logprobs > 0)
      throw BadRequest(
          "stream: vime serve returns logprobs > 0 (alternatives) without stream only");
    stream_completion(ctx, o, usage, prompts[0], res);
    return;
  }

  // Choice i * n + j is prompt i's j-th sample, as vLLM numbers them; all batched by the engine.
  std::vector<std::future<GenerateResponse>> pending;
  std::deque<engine::TopLogProbs> tops;  // one per choice, filled by the engine
  // One per prompt, scored with its first choice (the others share it).
  std::deque<engine::PromptLogProbs> scored;
  for (const auto& ids : prompts) {
    for (int64_t j = 0; j < n; ++j) {
      GenerateRequest g{ids, params_of_choice(params, j), request_id, true, {}};
      auto* top = &tops.emplace_back(engine::TopLogProbs{o.top_logprobs, {}});
      engine::PromptLogProbs* prompt = nullptr;
      if (o.prompt_logprobs && j == 0)
        prompt = &scored.emplace_back(engine::PromptLogProbs{*o.prompt_logprobs, {}});
      pending.push_back(std::async(
          std::launch::async, [&ctx, g, top, prompt] { return ctx.generate(g, top, prompt); }));
    }
  }
  Json choices = Json::array();
  int64_t prompt_tokens = 0, completion_tokens = 0, cached = 0;
  Json weight_version = nullptr;
  for (size_t c = 0; c < pending.size(); ++c) {
    const size_t i = c / static_cast<size_t>(n);
    const GenerateResponse r = pending[c].get();
    int64_t offset = 0;
    Json choice = Json::object();
    choice["index"] = static_cast<int64_t>(c);
    choice["text"] = output_text(ctx, r, params);
    choice["logprobs"] = o.want_logprobs
                             ? completion_logprobs(ctx, r.output_ids, r.output_log_probs, o.as_ids,
                                                   offset, tops[c].positions)
                             : Json(nullptr);
    choice["finish_reason"] = r.finish_reason;
    choice["stop_reason"] = stop_reason_of(ctx, r, params);
    choice["token_ids"] = o.return_ids ? Json(r.output_ids) : Json(nullptr);
    choice["prompt_token_ids"] = o.return_ids ? Json(prompts[i]) : Json(nullptr);
    choice["prompt_logprobs"] = o.prompt_logprobs
                                    ? prompt_logprobs_json(ctx, prompts[i], scored[i], o.as_ids)
                                    : Json(nullptr);
    choices.push_back(std::move(choice));
    if (c % static_cast<size_t>(n) == 0) prompt_tokens += static_cast<int64_t>(prompts[i].size());
    completion_tokens += static_cast<int64_t>(r.output_ids.size());
    cached += r.cached_tokens;
    weight_version = weight_version_of(r);  // the weights of the choice that ended last
  }
  Json out = Json::object();
  out["id"] = request_id;
  out["object"] = "text_completion";
  out["created"] = o.created;
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
