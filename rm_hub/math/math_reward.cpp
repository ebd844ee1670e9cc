// --rm-type math: 1 when the last \boxed{} answer of the response matches the label under mathd
// normalisation or sympy-style equivalence, else 0 (slime: int(grade_answer_verl)).
#include <vime/hooks.hpp>

#include "common/py_value.hpp"
#include "math/grade.hpp"

namespace {

vime::Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  if (!vime::rm::python_truthy(sample.label)) return 0;
  bool ok = vime::rm::grade_answer_verl(sample.response, vime::rm::python_str(sample.label));
  return ok ? 1 : 0;
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
