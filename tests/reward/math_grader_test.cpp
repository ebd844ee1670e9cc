// slime's math grader, piece by piece: slime's vectors (tests/test_rm_math.py) for
// _strip_string, mathd, sympy and grade_answer_verl, plus are_equal_under_sympy cases whose
// expected values were computed with sympy 1.11 (Debian python3-sympy) through slime's function.
#include <catch2/catch.hpp>

#include "math/boxed.hpp"
#include "math/grade.hpp"
#include "math/latex_to_text.hpp"
#include "math/mathd_normalize.hpp"
#include "math/sympy_equal.hpp"
#include "math/sympy_normalize.hpp"

using namespace vime::rm;

TEST_CASE("_strip_string normalises like slime", "[rm_math]") {
  CHECK(strip_string("\\frac12") == "\\frac{1}{2}");
  CHECK(strip_string("\\tfrac{1}{2}") == "\\frac{1}{2}");
  CHECK(strip_string("\\left(1\\right)") == "(1)");
  CHECK(strip_string("45^{\\circ}") == "45");
  CHECK(strip_string(".7") == "0.7");
  CHECK(strip_string("0.5") == "\\frac{1}{2}");
  CHECK(strip_string(".5") == "\\frac{1}{2}");
  CHECK(strip_string("3/4") == "\\frac{3}{4}");
  CHECK(strip_string("1 + 1") == "1+1");
  CHECK(strip_string("k = 7") == "7");
  CHECK(strip_string("\\sqrt3") == "\\sqrt{3}");
  CHECK(strip_string("5 \\text{ cm}") == "5");
  // Where Python raises (an empty \sqrt argument), mathd_normalize_answer returns its input.
  CHECK(mathd_normalize_answer(std::string("x\\sqrt")) == "x\\sqrt");
  CHECK(mathd_normalize_answer(std::string("\\text{ 5 }")) == "5");
  CHECK_FALSE(mathd_normalize_answer(std::nullopt).has_value());
}

TEST_CASE("mathd and sympy equivalence", "[rm_math]") {
  CHECK(grade_answer_mathd(std::string("0.5"), "\\frac{1}{2}"));
  CHECK(grade_answer_mathd(std::string("45"), "45^\\circ"));
  CHECK(grade_answer_sympy(std::string("1+x"), "x+1"));
  CHECK_FALSE(grade_answer_sympy(std::string("\\frac{2}{4}"), "\\frac{1}{2}"));  // unreduced
  CHECK(grade_answer_sympy(std::string("(1, 2)"), "(1,2)"));
  CHECK_FALSE(grade_answer_sympy(std::string("[1,2]"), "(1,2)"));  // interval brackets differ
  CHECK(grade_answer_sympy(std::string("2\\sqrt{3}"), "\\sqrt{12}"));
  CHECK(grade_answer_sympy(std::string("(x-1)(x+1)"), "x^2-1"));
  CHECK_FALSE(grade_answer_sympy(std::string("x+2"), "x+1"));
  // Unit stripping: slime's "day" unit makes "Mon" equal "Monday" (kept, so ported runs compare).
  CHECK(grade_answer_sympy(std::string("Mon"), "\\text{Monday}"));
}

TEST_CASE("grade_answer_verl", "[rm_math]") {
  CHECK(grade_answer_verl("answer: \\boxed{42}", "\\boxed{42}"));
  CHECK_FALSE(grade_answer_verl("just 42", "42"));
  CHECK_FALSE(grade_answer_verl("\\boxed{42}", "41"));
  CHECK(grade_answer_verl("so \\boxed{\\frac{1}{2}}", "0.5"));
}

TEST_CASE("boxed extraction", "[rm_math]") {
  CHECK(extract_boxed_answer("\\boxed{1} then \\boxed{2}") == "2");        // the last box wins
  CHECK(extract_boxed_answer("\\boxed{\\frac{1}{2}}") == "\\frac{1}{2}");  // nested braces kept
  CHECK_FALSE(extract_boxed_answer("\\boxed{12").has_value());             // unterminated
  CHECK_FALSE(extract_boxed_answer("no box").has_value());
  CHECK(last_boxed_only_string("\\fbox{3}") == "\\fbox{3}");
  CHECK_FALSE(remove_boxed(last_boxed_only_string("\\fbox{3}")).has_value());
}

TEST_CASE("LaTeX renders like pylatexenc", "[rm_math]") {
  // Expected strings printed by pylatexenc 2.10's LatexNodes2Text().latex_to_text.
  CHECK(latex_to_text("\\frac{x+1}{2}") == "x+1/2");
  CHECK(latex_to_text("\\sqrt{2}") == "√(2)");
  CHECK(latex_to_text("2\\sqrt{3}") == "2√(3)");
  CHECK(latex_to_text("\\frac12") == "1/2");
  CHECK(latex_to_text("\\frac{\\sqrt{3}}{2}") == "√(3)/2");
  CHECK(latex_to_text("\\left(1,2\\right)") == "(1,2)");
  CHECK(latex_to_text("\\text{hi}") == "hi");
  CHECK(latex_to_text("\\sin x") == "sinx");
  CHECK(latex_to_text("\\sqrt[3]{2}") == "√(2)");
  CHECK(latex_to_text("\\binom{3}{2}") == "32");
  CHECK(latex_to_text("\\mbox{a}") == "");
  CHECK(latex_to_text("x^{2}") == "x^2");
  CHECK(latex_to_text("\\frac{2\\pi}{3}") == "2π/3");
  CHECK(latex_to_text("\\varnothing") == "∅");
  CHECK(latex_to_text("\\tilde{a}") == "ã");      // mark, then NFC
  CHECK(latex_to_text("\\bar{3}") == "3\u0305");  // no composed form: stays combining
  CHECK(latex_to_text("\\mathbb{Z}") == "ℤ");
  CHECK(latex_to_text("\\mathbf{x1}") == "\U0001D4311");
  CHECK(latex_to_text("\\hspace{1cm}x") == "x");
  CHECK(latex_to_text("\\gcd") == "");  // pylatexenc knows no \gcd
}

TEST_CASE("sympy normalisation", "[rm_math]") {
  CHECK(sympy_normalize(std::string("7\\frac{3}{4}")) == "7+3/4");
  CHECK(sympy_normalize(std::string("1,000,000")) == "1000000");
  CHECK(sympy_normalize(std::string("5 \\text{ cm}^2")) == "5^2");  // slime leaves the ^2
  CHECK(sympy_normalize(std::string("3 million")) == "3*10^6");
  CHECK(sympy_normalize(std::string("\\$18.90")) == "18.90");
  CHECK(sympy_normalize(std::string("11.9999999999")) == "12");
  CHECK(split_tuple("(1,2)") == std::vector<std::string>{"1", "2"});
  CHECK(split_tuple("1,000") == std::vector<std::string>{"1000"});
  CHECK(is_frac("-3/4"));
  CHECK_FALSE(is_frac("3/0"));
  CHECK(str_is_int("1,000"));
  CHECK_FALSE(str_is_int("1.5"));
  CHECK_FALSE(should_allow_eval("(abc)-(1)"));
  CHECK_FALSE(should_allow_eval("(2^{3})-(8)"));
  CHECK_FALSE(should_allow_eval("(2^10)-(1024)"));
}

TEST_CASE("are_equal_under_sympy agrees with sympy 1.11", "[rm_math]") {
  struct Case {
    const char* a;
    const char* b;
    bool equal;  // slime's are_equal_under_sympy(a, b) under sympy 1.11
  };
  const Case cases[] = {
      {"0.5sqrt(2)", "sqrt(2)/2", true},
      {"sqrt(1.25)", "sqrt(5/4)", false},
      {"1.0+sqrt(2)", "1+sqrt(2)", true},
      {"sqrt(2.0)", "sqrt(2)", false},
      {"0.5x", "x/2", true},
      {"2**0.5", "sqrt(2)", false},
      {"x**0.5", "sqrt(x)", false},
      {"0.1+0.2", "0.3", false},
      {"pi*1.0", "pi", true},
      {"1.5", "3/2", true},
      {"x2", "2x", true},
      {"2(3)", "6", true},
      {"x(1)", "x", true},
      {"5!", "120", true},
      {"(1)(2)", "2", true},
      {"sqrt(x**2)", "x", false},
      {"1e3", "1000", true},
      {"ab", "ba", true},
      {".5", "1/2", true},
      {"2pi", "pi+pi", true},
      {"pi", "3.14159265358979", false},
      {"1/0", "1/0", false},
      {"(1,2)", "(1,2)", false},
      {"x=1", "x=1", false},
  };
  for (const auto& c : cases) {
    INFO(c.a << " vs " << c.b);
    CHECK(are_equal_under_sympy(c.a, c.b) == c.equal);
  }
}
