// Search-R1 as a vime plugin (slime examples/search-r1/generate_with_search.py): a generate
// function that lets the model search, and its exact-match reward, in one .so:
//
//   vime train --rollout-plugin build/plugins/search_r1.so --custom-config-path search.yaml ...
//
// Each turn the engine generates until </search> or </answer> (added to the stop strings); the
// first <search>q</search> or <answer>a</answer> of the turn decides: a search appends
// "\n\n<information>Doc 1(Title: ...) ...</information>\n\n", an answer ends the sample, anything
// else appends slime's "My previous action is invalid..." text. Appended text has loss mask 0 and
// log-prob 0. At most max_turns engine calls; a "length" finish ends the sample.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "common/py_text.hpp"
#include "qa_em_format.hpp"
#include "search_backend.hpp"
#include "search_config.hpp"
#include "vime/hooks.hpp"
#include "vime/multi_turn.hpp"
#include "vime/regex.hpp"

namespace {

constexpr const char* kInvalidAction =
    "\nMy previous action is invalid. If I want to search, I should put the query between "
    "<search> and </search>. If I want to give the final answer, I should put the answer between "
    "<answer> and </answer>. Let me try again.\n";

struct Observation {
  std::string text;  // appended with loss mask 0; empty when done
  bool done = false;
  bool searched = false;
};

// postprocess_predictions + execute_predictions: the first <(search|answer)>(.*?)</\1>.
Observation execute_prediction(const search_r1::SearchConfig& config, const std::string& turn) {
  static const vime::Regex action("(?s)<(search|answer)>(.*?)</\\1>");
  const auto match = action.search(turn);
  if (!match) return {kInvalidAction, false, false};
  if ((*match)[1] == "answer") return {"", true, false};
  const std::string query = vime::rm::strip((*match)[2].value_or(""));
  const std::string results =
      vime::rm::strip(search_r1::passages_to_string(search_r1::search(config, query)));
  return {"\n\n<information>" + results + "</information>\n\n", false, true};
}

std::string prompt_text(const vime::GenerateContext& ctx, const vime::Sample& sample) {
  if (sample.prompt.is_string()) return sample.prompt.as_string();
  return ctx.tokenizer.apply_chat_template(sample.prompt, nullptr, true,
                                           sample.apply_chat_template_kwargs);
}

bool flag_on(const vime::Args& args, const char* key) {
  return args.has(key) && args.get(key).is_bool() && args.get_bool(key);
}

}  // namespace

vime::Sample generate(vime::GenerateContext& ctx, vime::Sample sample,
                      const vime::SamplingParams& sampling_params) {
  if (flag_on(ctx.args, "partial_rollout")) {
    throw vime::UsageError("search_r1: --partial-rollout is not supported (as in slime)");
  }
  const auto config = search_r1::SearchConfig::from(ctx.args);
  const std::string prompt = prompt_text(ctx, sample);
  vime::start_response(sample, ctx.tokenizer.encode(prompt));

  vime::GenerateRequest request;
  request.sampling_params = sampling_params;
  request.session_id = sample.session_id;
  auto& stop = request.sampling_params.stop;
  for (const char* tag : {"</search>", "</answer>"}) {  // slime's stop-string fix, deduplicated
    if (std::find(stop.begin(), stop.end(), tag) == stop.end()) stop.emplace_back(tag);
  }

  int64_t turns = 0, searches = 0, invalid = 0;
  double search_seconds = 0;
  std::string finish_reason = "stop";
  for (int64_t turn = 0; turn < config.max_turns; ++turn) {
    const vime::TurnOutput out = vime::generate_turn(ctx, sample, request);
    ++turns;
    finish_reason = out.finish_reason;
    if (finish_reason == "abort") return sample;
    if (finish_reason == "length") break;

    const auto start = std::chrono::steady_clock::now();
    Observation obs = execute_prediction(config, out.text);
    if (obs.searched) {
      ++searches;
      search_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (obs.done) break;
    if (!obs.searched) ++invalid;
    sample.append_response_tokens(ctx.tokenizer.encode(obs.text), {}, /*trainable=*/false,
                                  obs.text);
  }
  sample.prompt = prompt;
  sample.set_status_from_finish_reason(finish_reason);
  vime::Json stats = vime::Json::object();
  stats["turns"] = turns;
  stats["search_calls"] = searches;
  stats["invalid_actions"] = invalid;
  stats["search_time_s"] = search_seconds;
  sample.metadata["search_r1"] = std::move(stats);
  return sample;
}

// slime's reward_func: compute_score_em(prompt + response, label["ground_truth"]).
vime::Json reward(const vime::Args& args, const vime::Sample& sample) {
  const auto config = search_r1::SearchConfig::from(args);
  const std::string prompt = sample.prompt.is_string() ? sample.prompt.as_string() : "";
  return search_r1::compute_score_em(prompt + sample.response,
                                     search_r1::golden_targets(sample.label), config.scores);
}

VIME_GENERATE_PLUGIN(generate)
VIME_REWARD_PLUGIN(reward)
