#include "vime/rollout/eval_rollout.hpp"

#include <algorithm>

#include "vime/data/tokenizer_hooks.hpp"
#include "vime/eval/eval_result.hpp"
#include "vime/eval/eval_samples.hpp"
#include "vime/rollout/default_generate.hpp"

namespace vime::rollout {

EvalRunner::EvalRunner(const RolloutOptions& options, const eval::EvalOptions& eval_options,
                       GroupGenerator& generator, const Tokenizer& tokenizer,
                       std::vector<eval::EvalDatasetConfig> datasets)
    : options_(options),
      eval_options_(eval_options),
      generator_(generator),
      tokenizer_(tokenizer),
      datasets_(std::move(datasets)) {}

std::map<std::string, size_t> EvalRunner::samples_per_prompt() const {
  std::map<std::string, size_t> out;
  for (const auto& d : datasets_) out[d.name] = static_cast<size_t>(d.n_samples_per_eval_prompt);
  return out;
}

RolloutFnEvalOutput EvalRunner::run(int64_t rollout_id) {
  RolloutFnEvalOutput out;
  generator_.clear_abort();
  for (const auto& config : datasets_) {
    auto it = loaded_.find(config.name);
    if (it == loaded_.end())
      it = loaded_
               .emplace(config.name,
                        eval::load_eval_samples(eval_options_, config,
                                                data::chat_template_renderer(tokenizer_),
                                                data::token_counter(tokenizer_)))
               .first;
    std::vector<SampleGroup> groups =
        generator_.run(it->second, eval_sampling_params(options_, config), true, rollout_id);
    std::vector<Sample> samples;
    for (SampleGroup& group : groups)
      for (Sample& s : group) {
        // Only RolloutManager::abort() leaves samples ungraded: they count as reward 0.
        if (s.status == SampleStatus::kAborted && s.reward.is_null()) s.reward = 0.0;
        samples.push_back(std::move(s));
      }
    std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
      return a.index.value_or(-1) < b.index.value_or(-1);
    });
    out.data[config.name] = eval::make_eval_result(eval_options_, std::move(samples));
  }
  return out;
}

}  // namespace vime::rollout
