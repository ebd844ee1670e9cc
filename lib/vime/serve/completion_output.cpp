#include "vime/serve/completion_output.hpp"

#include <span>

namespace vime::serve {

std::string output_text(const ServeContext& ctx, const GenerateResponse& r,
                        const SamplingParams& params) {
  std::string text = ctx.tokenizer.decode(r.output_ids, params.skip_special_tokens);
  if (r.finish_reason == "stop" && !params.no_stop_trim) {
    for (const auto& s : params.stop) {
      if (auto at = text.find(s); !s.empty() && at != std::string::npos) text.resize(at);
    }
  }
  return text;
}

Json stop_reason_of(const ServeContext& ctx, const GenerateResponse& r,
                    const SamplingParams& params) {
  if (r.finish_reason != "stop") return nullptr;
  if (!r.output_ids.empty()) {
    for (int32_t id : params.stop_token_ids)
      if (id == r.output_ids.back()) return static_cast<int64_t>(id);
  }
  if (params.stop.empty()) return nullptr;
  const std::string text = ctx.tokenizer.decode(r.output_ids);
  for (const auto& s : params.stop)
    if (!s.empty() && text.find(s) != std::string::npos) return s;
  return nullptr;  // EOS
}

Json prompt_logprobs_json(const ServeContext& ctx, const std::vector<int32_t>& prompt,
                          const engine::PromptLogProbs& scored, bool as_ids) {
  if (prompt.empty() || scored.positions.size() != prompt.size() - 1) return nullptr;
  auto entry = [&](int32_t id, float log_prob, int64_t rank) {
    return Json::Object{
        {"logprob", clamp_logprob(log_prob)},
        {"rank", rank},
        {"decoded_token", as_ids ? token_id_label(id) : ctx.tokenizer.decode(std::span(&id, 1))}};
  };
  Json out = Json::Array{Json(nullptr)};
  for (const auto& p : scored.positions) {
    Json position = Json::object();
    position[std::to_string(p.token.token_id)] = entry(p.token.token_id, p.token.log_prob, p.rank);
    for (size_t k = 0; k < p.top.size(); ++k) {
      const std::string key = std::to_string(p.top[k].token_id);
      if (!position.find(key))
        position[key] = entry(p.top[k].token_id, p.top[k].log_prob, static_cast<int64_t>(k) + 1);
    }
    out.push_back(std::move(position));
  }
  return out;
}

bool include_usage(const Json& body) {
  const Json* options = body.find("stream_options");
  if (!options || options->is_null()) return false;
  if (!bool_field(body, "stream")) {
    throw BadRequest("stream_options: only allowed with stream=true");
  }
  if (!options->is_object()) throw BadRequest("stream_options must be an object");
  return bool_field(*options, "include_usage");
}

}  // namespace vime::serve
