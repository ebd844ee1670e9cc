// Responses are model output: arbitrary, sometimes pathological. Every grader must return (not
// crash, hang or throw) on random LaTeX soup and on deeply nested input.
#include <catch2/catch.hpp>
#include <chrono>
#include <random>

#include "math/grade.hpp"
#include "math/sympy_equal.hpp"
#include "reward/reward_test_support.hpp"

TEST_CASE("graders survive random and pathological answers", "[rm_math]") {
  const char* pieces[] = {
      "\\boxed{", "}",    "{",       "\\frac",  "\\sqrt",   "^",   "_",  "(",     ")",  "[", "]",
      ",",        "-",    "+",       "*",       "/",        "1",   "2",  "0",     ".",  "x", "y",
      "pi",       "\\pi", "\\text{", "\\left(", "\\right)", " ",   "=",  "!",     "\\", "$", "%",
      "e5",       "é",    "\xff",    "\\infty", "\\cdot",   "10^", "**", "sqrt(", "\n"};
  std::mt19937 rng(12345);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3000; ++i) {
    std::string answer, label;
    int n = static_cast<int>(rng() % 12), m = static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) answer += pieces[rng() % std::size(pieces)];
    for (int k = 0; k < m; ++k) label += pieces[rng() % std::size(pieces)];
    CHECK_NOTHROW(
        vime::rm::grade_answer_verl("\\boxed{" + answer + "}", label.empty() ? "1" : label));
    CHECK_NOTHROW(vime::rm::are_equal_under_sympy(answer, label));
  }
  std::string deep_braces = std::string(100000, '{') + "1" + std::string(100000, '}');
  std::string deep_fracs;
  for (int i = 0; i < 50000; ++i) deep_fracs += "\\frac";
  CHECK_NOTHROW(vime::rm::grade_answer_verl("\\boxed{" + deep_braces + "}", deep_braces));
  CHECK_NOTHROW(vime::rm::grade_answer_verl("\\boxed{" + deep_fracs + "}", "\\frac" + deep_fracs));
  CHECK_FALSE(vime::rm::are_equal_under_sympy(std::string(100000, '-') + "1", "-1"));
  CHECK_FALSE(vime::rm::are_equal_under_sympy(std::string(100000, '(') + "1", "1"));
  CHECK_FALSE(vime::rm::are_equal_under_sympy("3" + std::string(20000, '!'), "3"));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(s < 20.0);
  for (const char* type : {"deepscaler", "dapo", "f1", "gpqa"}) {
    CHECK_NOTHROW(
        vime::test::grade(type, "</think>Answer: " + deep_braces + " \\boxed{" + deep_fracs, "1"));
  }
}
