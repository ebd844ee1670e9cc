#include "math/grade.hpp"

#include "common/py_text.hpp"
#include "math/boxed.hpp"
#include "math/mathd_normalize.hpp"
#include "math/sympy_equal.hpp"
#include "math/sympy_normalize.hpp"

namespace vime::rm {

bool grade_answer_mathd(const std::optional<std::string>& given, const std::string& ground_truth) {
  return mathd_normalize_answer(ground_truth) == mathd_normalize_answer(given);
}

bool grade_answer_sympy(const std::optional<std::string>& given, const std::string& ground_truth) {
  auto gt = sympy_normalize(ground_truth);
  auto answer = sympy_normalize(given);
  if (!gt || !answer) return false;
  if (*gt == *answer) return true;
  if (answer->empty()) return false;

  auto gt_elems = split_tuple(*gt);
  auto given_elems = split_tuple(*answer);
  // slime compares the first and last characters (Python str indexing) of the whole normalised
  // strings: an interval's brackets must agree.
  if (gt_elems.size() > 1 && (gt->front() != answer->front() || gt->back() != answer->back())) {
    return false;
  }
  if (gt_elems.size() != given_elems.size()) return false;
  bool is_correct = false;  // slime: an empty tuple on both sides leaves it False
  for (size_t i = 0; i < gt_elems.size(); ++i) {
    const auto& g = gt_elems[i];
    const auto& a = given_elems[i];
    if (is_frac(g) && is_frac(a)) {
      is_correct = g == a;  // unreduced fractions must match as written
    } else if (str_is_int(g) != str_is_int(a)) {
      is_correct = false;
    } else {
      is_correct = are_equal_under_sympy(g, a);
    }
    if (!is_correct) break;
  }
  return is_correct;
}

bool grade_answer_verl(std::string_view solution, const std::string& ground_truth_in) {
  std::optional<std::string> ground_truth = ground_truth_in;
  if (contains(ground_truth_in, "\\boxed")) ground_truth = extract_boxed_answer(ground_truth_in);
  auto given = extract_boxed_answer(solution);
  if (!given) return false;
  // A boxed label that fails to extract is None in slime: mathd(None) == None only when the given
  // answer is None too (it is not here), and the sympy path returns False.
  if (!ground_truth) return false;
  return grade_answer_mathd(given, *ground_truth) || grade_answer_sympy(given, *ground_truth);
}

}  // namespace vime::rm
