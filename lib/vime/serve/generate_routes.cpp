// POST /inference/v1/generate (vLLM's token-in/token-out endpoint): token_ids + sampling_params
// in, token_ids + chat-format logprobs out (and, with --enable-return-routed-experts, each token's
// routed experts).
#include <httplib.h>

#include "vime/engine/routed_experts.hpp"
#include "vime/model/model.hpp"
#include "vime/serve/completion_output.hpp"
#include "vime/serve/serve_context.hpp"

namespace vime::serve {
namespace {

// top_logprobs at each position: the engine's N most likely tokens (logprobs=N), then the sampled
// token when it is not among them (with logprobs=0, the sampled token alone).
Json content_logprobs(const GenerateResponse& r, const engine::TopLogProbs& alternatives) {
  Json content = Json::array();
  for (size_t i = 0; i < r.output_ids.size(); ++i) {
    const std::string token = token_id_label(r.output_ids[i]);
    const Json lp =
        i < r.output_log_probs.size() ? Json(clamp_logprob(r.output_log_probs[i])) : Json(nullptr);
    Json top = Json::array();
    bool sampled_listed = false;
    if (i < alternatives.positions.size()) {
      for (const auto& t : alternatives.positions[i]) {
        sampled_listed |= t.token_id == r.output_ids[i];
        top.push_back(Json::Object{{"token", token_id_label(t.token_id)},
                                   {"logprob", clamp_logprob(t.log_prob)},
                                   {"bytes", nullptr}});
      }
    }
    if (!sampled_listed)
      top.push_back(Json::Object{{"token", token}, {"logprob", lp}, {"bytes", nullptr}});
    content.push_back(Json::Object{
        {"token", token}, {"logprob", lp}, {"bytes", nullptr}, {"top_logprobs", std::move(top)}});
  }
  return Json::Object{{"content", content}};
}

void generate(ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_body(req);
  if (const Json* s = body.find("stream"); s && s->is_bool() && s->as_bool()) {
    throw BadRequest("stream: streaming is not supported by vime serve");
  }
  const Json* ids = body.find("token_ids");
  if (!ids) throw BadRequest("token_ids is required");
  const auto prompt = token_ids_from(*ids, "token_ids", ctx.tokenizer.vocab_size());
  Json fields = Json::object();
  if (const Json* sp = body.find("sampling_params"); sp && !sp->is_null()) {
    if (!sp->is_object()) throw BadRequest("sampling_params must be an object");
    fields = *sp;
  }
  const SamplingParams params = sampling_params_from(fields);
  const auto prompt_logprobs = prompt_logprobs_from(fields);
  if (choices_per_prompt(fields) != 1) {
    throw BadRequest("n: /inference/v1/generate returns one sample per request; send n requests");
  }
  const Json* logprobs = fields.find("logprobs");
  std::string request_id = new_id(ctx, "gen-");
  if (const Json* id = body.find("request_id"); id && id->is_string()) request_id = id->as_string();

  bool routed = ctx.options.enable_return_routed_experts;
  if (const Json* want = body.find("return_routed_experts"); want && want->is_bool())
    routed |= want->as_bool();
  routed &= ctx.model.config().is_moe();

  engine::TopLogProbs top;
  if (logprobs && !logprobs->is_null()) top.count = logprobs->as_int();
  engine::PromptLogProbs scored{prompt_logprobs.value_or(0), {}};
  const GenerateResponse r = ctx.generate(GenerateRequest{.input_ids = prompt,
                                                          .sampling_params = params,
                                                          .session_id = request_id,
                                                          .group_id = {},
                                                          .return_routed_experts = routed},
                                          &top, prompt_logprobs ? &scored : nullptr);
  Json choice = Json::object();
  choice["index"] = 0;
  choice["finish_reason"] = r.finish_reason;
  choice["token_ids"] = r.output_ids;
  choice["logprobs"] = logprobs && !logprobs->is_null() ? content_logprobs(r, top) : Json(nullptr);
  const auto& config = ctx.model.config();
  choice["routed_experts"] =
      routed ? Json(engine::encode_routed_experts_npy(r.routed_experts, config.num_layers,
                                                      config.moe.num_experts_per_tok))
             : Json(nullptr);
  Json out = Json::object();
  out["request_id"] = request_id;
  out["choices"] = Json::Array{choice};
  out["usage"] = usage_json(static_cast<int64_t>(prompt.size()),
                            static_cast<int64_t>(r.output_ids.size()), r.cached_tokens);
  out["prompt_logprobs"] =
      prompt_logprobs ? prompt_logprobs_json(ctx, prompt, scored, /*as_ids=*/true) : Json(nullptr);
  out["kv_transfer_params"] = nullptr;
  out["weight_version"] = weight_version_of(r);
  send_json(res, out);
}

}  // namespace

void add_generate_routes(httplib::Server& http, ServeContext& ctx) {
  http.Post("/inference/v1/generate", [&ctx](const httplib::Request& req, httplib::Response& res) {
    generate(ctx, req, res);
  });
}

}  // namespace vime::serve
