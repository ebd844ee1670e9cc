#include "vime/serve/completion_output.hpp"

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
