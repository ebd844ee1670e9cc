// Regex, the one PCRE2 wrapper: the tokenizer's match iteration and the graders' Python re
// calls (search, findall, sub) on well-formed and broken UTF-8.
#include "vime/regex.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "vime/error.hpp"

using vime::Regex;
using Spans = std::vector<std::pair<size_t, size_t>>;

namespace {

Spans spans_of(const Regex& regex, std::string_view text) {
  Spans out;
  regex.for_each_match(text, [&](size_t start, size_t end) { out.emplace_back(start, end); });
  return out;
}

}  // namespace

TEST_CASE("for_each_match visits matches left to right; an empty match steps one character",
          "[regex]") {
  CHECK(spans_of(Regex("\\p{L}+"), "ab, cd!") == Spans{{0, 2}, {4, 6}});
  CHECK(spans_of(Regex("\\s*"), "é") == Spans{{0, 0}, {2, 2}});  // never inside the é
  CHECK(spans_of(Regex("x"), "").empty());
  CHECK(spans_of(Regex("\\p{Han}+", {.assume_valid_utf8 = true}), "a中文b") == Spans{{1, 7}});
}

TEST_CASE("search, findall and sub behave as Python's re", "[regex]") {
  const Regex text_re("^\\\\text\\{(?P<text>.+?)\\}$");
  auto m = text_re.search("\\text{cm}");
  REQUIRE(m.has_value());
  CHECK(*(*m)[0] == "\\text{cm}");
  CHECK(*(*m)[1] == "cm");
  CHECK_FALSE(text_re.search("\\text{cm} x").has_value());

  auto optional_group = Regex("(a)|(b)").search("b");
  REQUIRE(optional_group.has_value());
  CHECK_FALSE((*optional_group)[1].has_value());  // None, not ""
  CHECK(*(*optional_group)[2] == "b");

  CHECK(Regex("\\b([A-Z])\\b").findall("A or B, not CD") == std::vector<std::string>{"A", "B"});
  CHECK(Regex("[0-9]+").findall("1 22 333") == std::vector<std::string>{"1", "22", "333"});
  CHECK(Regex("(\\d)(,)(\\d\\d\\d)($|\\D)").sub("\\1\\3\\4", "1,000,000") == "1000,000");
  CHECK(Regex("(frac)([^{])(.)").sub("frac{\\2}{\\3}", "frac12") == "frac{1}{2}");
  CHECK(Regex("- *").sub("-", "a -  b") == "a -b");
  CHECK(Regex("x").sub("y", "") == "");
  CHECK(Regex("(?:answer)\\s*:\\s*([A-Z])", {.ignore_case = true}).search("ANSWER: c").has_value());
  CHECK_FALSE(Regex("answer").matches_anywhere("ANSWER"));
  CHECK(Regex("answer", {.ignore_case = true}).matches_anywhere("ANSWER"));
}

TEST_CASE("invalid UTF-8 (model output) matches around the bad bytes", "[regex]") {
  const std::string text = "a\xff\xfe b\xc3";
  CHECK(Regex("[a-z]").findall(text) == std::vector<std::string>{"a", "b"});
  CHECK(Regex("\\s").sub("_", text) == "a\xff\xfe_b\xc3");
  CHECK(Regex("b").matches_anywhere(text));
}

TEST_CASE("a pattern that does not compile names itself and the offset", "[regex]") {
  CHECK_THROWS_WITH(Regex("(unclosed"), Catch::Contains("regex '(unclosed' does not compile") &&
                                            Catch::Contains("offset 9"));
  CHECK_THROWS_AS(Regex("a{2,1}"), vime::Error);
}

TEST_CASE("escape makes any literal match itself", "[regex]") {
  const std::string literal = "a.b*c (d) [e] {f} ^$|?+\\ -/#&~";
  const Regex regex(Regex::escape(literal));
  CHECK(spans_of(regex, "x" + literal + "x") == Spans{{1, 1 + literal.size()}});
}

TEST_CASE("one Regex matches from many threads at once", "[regex]") {
  const Regex words("\\w+");
  std::vector<std::thread> threads;
  std::vector<size_t> counts(8, 0);
  for (size_t t = 0; t < counts.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) counts[t] += spans_of(words, "one two three").size();
    });
  }
  for (auto& thread : threads) thread.join();
  for (size_t count : counts) CHECK(count == 1500);
}
