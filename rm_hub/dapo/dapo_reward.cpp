// --rm-type dapo: {"score": 1.0 | -1.0, "acc": bool, "pred": str}; train with --reward-key score
// (slime math_dapo_utils.compute_score, Minerva "Answer:" extraction over the last 300 characters).
#include <vime/hooks.hpp>

#include "common/py_value.hpp"
#include "dapo/dapo_normalize.hpp"

namespace {

vime::Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  auto s = vime::rm::dapo_compute_score(sample.response, vime::rm::python_str(sample.label));
  vime::Json out = vime::Json::object();
  out["score"] = s.score;
  out["acc"] = s.acc;
  out["pred"] = s.pred ? vime::Json(*s.pred) : vime::Json();
  return out;
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
