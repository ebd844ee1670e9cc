// A real plugin with several exports, built with the public macros exactly as users build theirs.
#include <vime/hooks.hpp>

// 1.0 when the response contains the label, else 0.0.
vime::Json contains_label(const vime::Args& args, const vime::Sample& sample) {
  (void)args;
  return sample.response.find(sample.label.as_string()) != std::string::npos ? 1.0 : 0.0;
}
VIME_REWARD_PLUGIN(contains_label)

// A dict reward, read through --reward-key.
vime::Json scored(const vime::Args& args, const vime::Sample& sample) {
  (void)args;
  vime::Json out = vime::Json::object();
  out["score"] = static_cast<double>(sample.response.size());
  out["acc"] = true;
  return out;
}
VIME_REWARD_PLUGIN(scored)

vime::DynamicFilterOutput keep_nonzero_std(const vime::Args& args,
                                           const std::vector<vime::Sample>& group) {
  for (const auto& s : group) {
    if (s.get_reward_value(args) != group.front().get_reward_value(args)) return {true, "", false};
  }
  return {false, "zero_std", false};
}
VIME_DYNAMIC_FILTER_PLUGIN(keep_nonzero_std)
