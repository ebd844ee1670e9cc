// A multi-turn generate plugin with a calculator tool (--custom-generate-function-path). Copy it as
// the start of your own tool-using rollout: the model writes <calc>12*7</calc>, the plugin appends
// <result>84</result> (loss mask 0, log-prob 0: the model did not write it) and generates again,
// until the model stops, the response budget is used up or calculator_max_turns turns have run.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calc_expression.hpp"
#include "vime/hooks.hpp"

namespace {

constexpr std::string_view kOpen = "<calc>", kClose = "</calc>";

// The expression of a tool call that ends `text` ("... <calc>12*7</calc>"), or nothing: with the
// stop string trimmed (--no-stop-trim off) the text ends in "<calc>12*7" instead.
std::optional<std::string> trailing_call(std::string_view text) {
  auto open = text.rfind(kOpen);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(open + kOpen.size());
  if (rest.size() >= kClose.size() && rest.substr(rest.size() - kClose.size()) == kClose) {
    rest.remove_suffix(kClose.size());
  }
  if (rest.find(kClose) != std::string_view::npos) return std::nullopt;  // a closed, older call
  return std::string(rest);
}

// --rollout-max-response-len when set, else the request's max_new_tokens.
int64_t response_budget(const vime::Args& args, const vime::SamplingParams& params) {
  if (args.has("rollout_max_response_len") && args.is_set("rollout_max_response_len")) {
    return args.get_int("rollout_max_response_len");
  }
  return params.max_new_tokens;
}

// calculator_max_turns in the --custom-config-path YAML; 4 when absent.
int64_t max_turns(const vime::Args& args) {
  return args.has("calculator_max_turns") && args.is_set("calculator_max_turns")
             ? args.get_int("calculator_max_turns")
             : 4;
}

}  // namespace

vime::Sample generate(vime::GenerateContext& ctx, vime::Sample sample,
                      const vime::SamplingParams& sampling_params) {
  if (sample.tokens.empty()) {
    sample.tokens = sample.prompt.is_string()
                        ? ctx.tokenizer.encode(sample.prompt.as_string())
                        : ctx.tokenizer.encode(ctx.tokenizer.apply_chat_template(
                              sample.prompt, nullptr, true, sample.apply_chat_template_kwargs));
  }
  const int64_t budget = response_budget(ctx.args, sampling_params), turns = max_turns(ctx.args);
  const auto eos = ctx.tokenizer.eos_token_id();
  vime::GenerateRequest request;
  request.sampling_params = sampling_params;
  request.sampling_params.stop.emplace_back(kClose);
  request.session_id = sample.session_id;

  for (int64_t turn = 0; turn < turns; ++turn) {
    const int64_t left = budget - sample.response_length;
    if (left <= 0) {
      sample.status = vime::SampleStatus::kTruncated;
      return sample;
    }
    request.input_ids = sample.tokens;
    request.sampling_params.max_new_tokens = left;
    vime::GenerateResponse out = ctx.engine.generate(request);
    const std::string text = ctx.tokenizer.decode(out.output_ids);
    sample.append_response_tokens(out.output_ids, out.output_log_probs, /*trainable=*/true, text);
    if (!out.weight_version.empty()) sample.weight_versions.push_back(out.weight_version);
    sample.set_status_from_finish_reason(out.finish_reason);
    if (out.finish_reason != "stop") return sample;  // length: TRUNCATED, abort: ABORTED
    const bool ended_by_eos = !out.output_ids.empty() && eos && out.output_ids.back() == *eos;
    auto call = ended_by_eos ? std::nullopt : trailing_call(text);
    if (!call || turn + 1 == turns) return sample;  // the model answered, or no turns are left

    std::string result = "<result>" + calculator::evaluate(*call) + "</result>";
    std::vector<int32_t> ids = ctx.tokenizer.encode(result);
    const int64_t room = budget - sample.response_length;
    if (static_cast<int64_t>(ids.size()) >= room) {  // no room left for the model to answer
      ids.resize(static_cast<size_t>(std::max<int64_t>(room, 0)));
      sample.append_response_tokens(ids, {}, /*trainable=*/false, ctx.tokenizer.decode(ids));
      sample.status = vime::SampleStatus::kTruncated;
      return sample;
    }
    sample.append_response_tokens(ids, {}, /*trainable=*/false, result);
  }
  return sample;
}

VIME_GENERATE_PLUGIN(generate)
