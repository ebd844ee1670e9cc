// --rm-type deepscaler: the answer after the last </think> (else after the first ###Response; else
// 0) graded like math, 1 or 0 (slime deepscaler.py).
#include <vime/hooks.hpp>

#include "common/py_text.hpp"
#include "common/py_value.hpp"
#include "math/boxed.hpp"
#include "math/grade.hpp"

namespace {

vime::Json reward(const vime::Args& /*args*/, const vime::Sample& sample) {
  using namespace vime::rm;
  const std::string& response = sample.response;
  std::string solution;
  if (contains(response, "</think>")) {
    solution = split(response, "</think>").back();
  } else if (contains(response, "###Response")) {
    solution = split(response, "###Response")[1];
  } else {
    return 0;
  }
  auto answer = extract_boxed_answer(solution);
  if (!answer) return 0;
  const vime::Json& label = sample.label;
  if (label.is_string() && label.as_string().empty()) return 0;
  if (!label.is_string() && !label.is_number() && !label.is_bool()) {
    throw vime::Error("deepscaler reward: the label must be a string or a number, got " +
                      std::string(label.type_name()));
  }
  std::string truth = python_str(label);
  if (contains(truth, "\\boxed") || contains(truth, "\\fbox")) {
    auto extracted = extract_boxed_answer(truth);
    if (!extracted) return 0;
    truth = *extracted;
  }
  return grade_answer_mathd(answer, truth) || grade_answer_sympy(answer, truth) ? 1 : 0;
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
