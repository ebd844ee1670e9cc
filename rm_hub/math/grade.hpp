// slime's math answer grading (math_utils.py): mathd string match or sympy-style equivalence.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::rm {

bool grade_answer_mathd(const std::optional<std::string>& given, const std::string& ground_truth);
bool grade_answer_sympy(const std::optional<std::string>& given, const std::string& ground_truth);
// grade_answer_verl: the boxed answer of `solution` against `ground_truth` (itself unboxed first).
// `ground_truth` is str(label); an empty/falsy label never matches (the caller decides falsiness).
bool grade_answer_verl(std::string_view solution, const std::string& ground_truth);

}  // namespace vime::rm
