// --rm-type f1: token F1 of the response against the label (slime: f1_score(response, label)[0]).
#include <vime/hooks.hpp>

#include "f1/f1_score.hpp"

namespace {

vime::Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  if (!sample.label.is_string()) {
    throw vime::Error("f1 reward: the label must be a string, got " +
                      std::string(sample.label.type_name()));
  }
  return vime::rm::f1_score(sample.response, sample.label.as_string()).f1;
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
