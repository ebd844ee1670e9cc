// The rm_hub plugins through the real dispatch: slime's test vectors for dapo, deepscaler, f1, gpqa
// (slime's tests/test_rm_*.py), plus random.
#include <catch2/catch.hpp>

#include "dapo/dapo_normalize.hpp"
#include "f1/f1_score.hpp"
#include "reward/reward_test_support.hpp"

using vime::Json;
using vime::test::grade;

TEST_CASE("dapo normalisation and scoring", "[rm_graders]") {
  using vime::rm::normalize_final_answer;
  CHECK(normalize_final_answer("x = 42") == "42");
  CHECK(normalize_final_answer("an answer") == "answer");
  CHECK(normalize_final_answer("42 square") == "42");
  CHECK(normalize_final_answer("100 dollars") == "100");
  CHECK(normalize_final_answer("\\text{hello}") == "hello");
  CHECK(normalize_final_answer("1,234,567") == "1234567");
  CHECK(normalize_final_answer("a b c") == "bc");
  CHECK(normalize_final_answer("42<|im_end|>") == "42");

  Json r = grade("dapo", "Answer: 41 was a wrong guess.\nAnswer: 42", "42");
  CHECK(r.at("score").as_double() == 1.0);
  CHECK(r.at("acc").as_bool());
  CHECK(r.at("pred").as_string() == "42");
  CHECK(grade("dapo", "Answer: 41", "42").at("score").as_double() == -1.0);
  CHECK(grade("dapo", "no answer", "42").at("pred").as_string() == "[INVALID]");

  auto strict = vime::rm::dapo_compute_score("\\boxed{42}", "42", true);
  CHECK(strict.score == 1.0);
  CHECK(strict.acc);
  CHECK(strict.pred == "42");
  auto late = vime::rm::dapo_compute_score("\\boxed{42}" + std::string(301, 'x'), "42", true);
  CHECK(late.score == -1.0);

  CHECK_THROWS_WITH(grade("dapo", "Answer: 3", "three"), Catch::Contains("not a number"));
}

TEST_CASE("deepscaler", "[rm_graders]") {
  CHECK(grade("deepscaler", "think \\boxed{99}</think>Final: \\boxed{42}", "42").as_int() == 1);
  CHECK(grade("deepscaler", "prompt ###Response\\boxed{42}", "42").as_int() == 1);
  CHECK(grade("deepscaler", "\\boxed{42}", "42").as_int() == 0);  // no marker
  CHECK(grade("deepscaler", "</think>\\boxed{42}", 42).as_int() == 1);
  CHECK(grade("deepscaler", "</think>\\boxed{42}", "\\boxed{42}").as_int() == 1);
  CHECK(grade("deepscaler", "</think>\\boxed{\\frac{1}{2}}", "0.5").as_int() == 1);
  CHECK(grade("deepscaler", "</think>\\boxed{42}", "").as_int() == 0);
  CHECK_THROWS(grade("deepscaler", "</think>\\boxed{42}", Json::array()));
}

TEST_CASE("f1", "[rm_graders]") {
  using vime::rm::f1_score;
  using vime::rm::normalize_answer;
  CHECK(normalize_answer("An apple, a day") == "apple day");
  CHECK(normalize_answer("a.b,c!") == "abc");
  auto s = f1_score("the brown fox", "a quick brown fox");
  CHECK(s.precision == Approx(1.0));
  CHECK(s.recall == Approx(2.0 / 3.0));
  CHECK(s.f1 == Approx(0.8));
  auto yes = f1_score("yes", "yes");
  CHECK((yes.f1 == 1.0 && yes.precision == 1.0 && yes.recall == 1.0));
  auto other = f1_score("yes", "other");
  CHECK((other.f1 == 0.0 && other.precision == 0.0 && other.recall == 0.0));
  CHECK(grade("f1", "the brown fox", "a quick brown fox").as_double() == Approx(0.8));
  CHECK_THROWS_WITH(grade("f1", "x", 3), Catch::Contains("label must be a string"));
}

TEST_CASE("gpqa", "[rm_graders]") {
  Json four = Json::object();
  four["choices"] = Json(Json::Array{"1", "2", "3", "4"});
  CHECK(grade("gpqa", "A is correct here", "A").as_double() == 1.0);
  CHECK(grade("gpqa", "we ruled out A, then B, settled on C", "C").as_double() == 1.0);
  Json ab = Json::object();
  ab["valid_letters"] = Json(Json::Array{"A", "B"});
  CHECK(grade("gpqa", "Answer: C, but actually A was right, no wait B.", "B", ab).as_double() ==
        1.0);
  CHECK(grade("gpqa", "Answer: C", 2, four).as_double() == 1.0);
  CHECK(grade("gpqa", "Answer: D", 2, four).as_double() == 0.0);
  CHECK(grade("gpqa", "Definitely paris.", "Paris").as_double() == 1.0);
  Json lower = Json::object();
  lower["correct_letter"] = "a";
  CHECK(grade("gpqa", "The answer is A", "", lower).as_double() == 1.0);
}

TEST_CASE(
    "gpqa's answer-text fallback: substring and label text (gpqa), whole words (gpqa_whole_word)",
    "[rm_graders]") {
  // No letter in the response, so the correct answer's text decides. --rm-type gpqa: slime's rule
  // as documented, any substring of the normalised response, the label text included.
  CHECK(grade("gpqa", "The capital is Parisian", "Paris").as_double() == 1.0);
  CHECK(grade("gpqa", "i think it is b", "B").as_double() == 1.0);
  CHECK(grade("gpqa", "no idea", "Paris").as_double() == 0.0);
  // --rm-type gpqa_whole_word: slime 643f912's gpqa.py (the goldens): whole words, and a
  // single-letter label is never matched as text.
  CHECK(grade("gpqa_whole_word", "The capital is Parisian", "Paris").as_double() == 0.0);
  CHECK(grade("gpqa_whole_word", "i think it is b", "B").as_double() == 0.0);
  CHECK(grade("gpqa_whole_word", "Definitely paris.", "Paris").as_double() == 1.0);
  // The letter rules are the same in both.
  for (const char* type : {"gpqa", "gpqa_whole_word"}) {
    CHECK(grade(type, "we ruled out A, then B, settled on C", "C").as_double() == 1.0);
    CHECK(grade(type, "we ruled out A, then B, settled on C", "B").as_double() == 0.0);
  }
}

TEST_CASE("random gives both 0 and 1", "[rm_graders]") {
  int ones = 0;
  for (int i = 0; i < 200; ++i) {
    auto r = grade("random", "x", "y").as_int();
    REQUIRE((r == 0 || r == 1));
    ones += static_cast<int>(r);
  }
  CHECK(ones > 50);
  CHECK(ones < 150);
}
