// ReTool as a vime plugin (slime examples/retool/generate_with_retool.py): a generate function
// that lets the model run Python in a sandbox, and its reward, in one .so:
//
//   vime train --rollout-plugin build/plugins/retool.so --custom-config-path retool.yaml
//       --reward-key score ...
//
// The prompt is slime's tool template around the sample's prompt. Each turn the engine continues
// from the tokens so far (no stop strings are added, as in slime); the turn's first action decides:
// "Answer: \boxed{..}" ends the sample; a <code>, ```python or code_interpreter <tool_call> block
// runs in the sandbox and "\n\n<interpreter>\n<output>\n</interpreter>\n\n" is appended; anything
// else appends slime's "My previous action is invalid..." text. Appended text has loss mask 0 and
// log-prob 0. At most max_turns engine calls and max_tool_calls code runs; a "length" finish ends
// the sample; the context budget (--rollout-max-context-len, else context-parallel size x
// --max-tokens-per-gpu) clamps each turn and truncates an observation that would overflow it.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "code_interpreter.hpp"
#include "common/py_value.hpp"
#include "dapo/dapo_normalize.hpp"
#include "retool_config.hpp"
#include "retool_text.hpp"
#include "vime/hooks.hpp"
#include "vime/multi_turn.hpp"

namespace {

std::string prompt_text(const vime::GenerateContext& ctx, const vime::Sample& sample) {
  if (sample.prompt.is_string()) return sample.prompt.as_string();
  return ctx.tokenizer.apply_chat_template(sample.prompt, nullptr, true,
                                           sample.apply_chat_template_kwargs);
}

const vime::Json* arg(const vime::Args& args, const char* key) {
  return args.has(key) && args.is_set(key) ? &args.get(key) : nullptr;
}

// slime's max_context_length; 0 where neither flag is set (slime would fail on None): no budget.
int64_t max_context_length(const vime::Args& args) {
  if (const vime::Json* v = arg(args, "rollout_max_context_len"); v && v->is_int()) {
    return v->as_int();
  }
  const vime::Json* per_gpu = arg(args, "max_tokens_per_gpu");
  if (!per_gpu || !per_gpu->is_int()) return 0;
  const vime::Json* cp = arg(args, "context_parallel_size");
  return (cp && cp->is_int() ? cp->as_int() : 1) * per_gpu->as_int();
}

}  // namespace

vime::Sample generate(vime::GenerateContext& ctx, vime::Sample sample,
                      const vime::SamplingParams& sampling_params) {
  if (const vime::Json* v = arg(ctx.args, "partial_rollout"); v && v->is_bool() && v->as_bool()) {
    throw vime::UsageError("retool: --partial-rollout is not supported (as in slime)");
  }
  const auto config = retool::RetoolConfig::from(ctx.args);
  const std::string user_prompt = prompt_text(ctx, sample);
  const std::string prompt = retool::format_prompt(user_prompt);
  vime::start_response(sample, ctx.tokenizer.encode(prompt));
  const int64_t context = max_context_length(ctx.args);
  const auto prompt_len = static_cast<int64_t>(sample.tokens.size());

  vime::GenerateRequest request;
  request.sampling_params = sampling_params;
  request.session_id = sample.session_id;
  int64_t turns = 0, tool_calls = 0, code_runs = 0, timeouts = 0, invalid = 0;
  double code_seconds = 0;
  std::string finish_reason = "stop";
  for (int64_t turn = 0; turn < config.max_turns; ++turn) {
    const int64_t total = prompt_len + sample.response_length;
    if (context > 0 && total >= context) {
      sample.status = vime::SampleStatus::kTruncated;
      break;
    }
    if (context > 0) {
      const int64_t budget = context - total;
      const int64_t asked =
          sampling_params.max_new_tokens > 0 ? sampling_params.max_new_tokens : budget;
      request.sampling_params.max_new_tokens = std::min(asked, budget);
    }
    const vime::TurnOutput out = vime::generate_turn(ctx, sample, request);
    ++turns;
    finish_reason = out.finish_reason;
    if (finish_reason == "abort") return sample;
    if (finish_reason == "length") break;

    retool::Observation obs = retool::execute_prediction(config, out.text);
    if (obs.done) break;
    if (obs.tool_call) ++tool_calls;
    if (obs.run.ran) ++code_runs;
    if (obs.run.timed_out) ++timeouts;
    if (!obs.tool_call) ++invalid;
    code_seconds += obs.run.seconds;

    std::vector<int32_t> obs_ids = ctx.tokenizer.encode(obs.text);
    const int64_t overflow =
        prompt_len + sample.response_length + static_cast<int64_t>(obs_ids.size()) - context;
    if (context > 0 && overflow > 0) {
      // Cut the observation to fit; the text is then re-decoded from the tokens, as slime does.
      obs_ids.resize(static_cast<size_t>(std::max<int64_t>(0, obs_ids.size() - overflow)));
      sample.append_response_tokens(obs_ids, {}, /*trainable=*/false);
      sample.response = ctx.tokenizer.decode(
          std::vector<int32_t>(sample.tokens.begin() + prompt_len, sample.tokens.end()), false);
      sample.status = vime::SampleStatus::kTruncated;
      break;
    }
    sample.append_response_tokens(obs_ids, {}, /*trainable=*/false, obs.text);
    if (tool_calls >= config.max_tool_calls) break;
  }
  sample.prompt = user_prompt;  // slime's sample.prompt stays the prompt text, not the tool prompt
  if (sample.status == vime::SampleStatus::kPending) {
    sample.set_status_from_finish_reason(finish_reason);
  }
  vime::Json stats = vime::Json::object();
  stats["tool_call_count"] = tool_calls;
  stats["turns"] = turns;
  stats["code_runs"] = code_runs;
  stats["code_timeouts"] = timeouts;
  stats["invalid_actions"] = invalid;
  stats["code_time_s"] = code_seconds;
  sample.metadata["retool"] = std::move(stats);
  return sample;
}

// slime's reward_func: math_dapo compute_score(prompt + response, label, strict_box_verify=True);
// a wrong answer earns (tool_call_count - 2) / 2 * 0.1 back, capped at -0.6.
vime::Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  const std::string prompt = sample.prompt.is_string() ? sample.prompt.as_string() : "";
  const std::string label = sample.label.is_null() ? "" : vime::rm::python_str(sample.label);
  int64_t tool_calls = 0;  // getattr(sample, "tool_call_count", 0)
  if (const vime::Json* stats = sample.metadata.find("retool"); stats && stats->is_object()) {
    if (const vime::Json* n = stats->find("tool_call_count"); n && n->is_int()) {
      tool_calls = n->as_int();
    }
  }
  const auto s = vime::rm::dapo_compute_score(prompt + sample.response, label,
                                              /*strict_box_verify=*/true);
  double score = s.score;
  if (score < 0) {
    const double tool_call_reward = static_cast<double>(tool_calls - 2) / 2 * 0.1;
    score = std::min(-0.6, score + tool_call_reward);
  }
  vime::Json out = vime::Json::object();
  out["score"] = score;
  out["acc"] = s.acc;
  out["pred"] = s.pred.value_or("");
  return out;
}

VIME_GENERATE_PLUGIN(generate)
VIME_REWARD_PLUGIN(reward)
