#include "vime/eval/eval_result.hpp"

#include "vime/error.hpp"

namespace vime::eval {

EvalDatasetResult make_eval_result(const EvalOptions& options, std::vector<Sample> samples) {
  const std::optional<std::string>& key = options.reward_key;
  EvalDatasetResult result;
  result.rewards.reserve(samples.size());
  for (const Sample& s : samples) {
    const std::string which = "eval sample " + std::to_string(s.index.value_or(-1));
    const Json* value = &s.reward;
    if (key && s.reward.is_object()) {
      value = s.reward.find(*key);
      if (value == nullptr)
        throw Error(which + ": the reward has no key '" + *key +
                    "' (--eval-reward-key): " + s.reward.dump());
    }
    if (!value->is_number() && !value->is_bool())
      throw Error(which + ": the reward is " + std::string(value->type_name()) +
                  ", not a number; set --eval-reward-key for object rewards");
    result.rewards.push_back(value->is_bool() ? (value->as_bool() ? 1.0 : 0.0)
                                              : value->as_double());
    result.truncated.push_back(s.status == SampleStatus::kTruncated ? 1 : 0);
  }
  result.samples = std::move(samples);
  return result;
}

}  // namespace vime::eval
