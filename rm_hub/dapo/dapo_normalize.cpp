#include "dapo/dapo_normalize.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "common/py_text.hpp"
#include "vime/error.hpp"
#include "vime/regex.hpp"

namespace vime::rm {
namespace {

const std::pair<std::string_view, std::string_view> kSubstitutions[] = {
    {"an ", ""},          {"a ", ""},
    {".$", "$"},          {"\\$", ""},
    {"\\ ", ""},          {" ", ""},
    {"mbox", "text"},     {",\\text{and}", ","},
    {"\\text{and}", ","}, {"\\text{m}", "\\text{}"},
};

const std::string_view kRemovedExpressions[] = {
    "square",
    "ways",
    "integers",
    "dollars",
    "mph",
    "inches",
    "hours",
    "km",
    "units",
    "\\ldots",
    "sue",
    "points",
    "feet",
    "minutes",
    "digits",
    "cents",
    "degrees",
    "cm",
    "gm",
    "pounds",
    "meters",
    "meals",
    "edges",
    "students",
    "childrentickets",
    "multiples",
    "\\text{s}",
    "\\text{.}",
    "\\text{\ns}",
    "\\text{}^2",
    "\\text{}^3",
    "\\text{\n}",
    "\\text{}",
    "\\mathrm{th}",
    "^\\circ",
    "^{\\circ}",
    "\\;",
    ",\\!",
    "{,}",
    "\"",
    "\\dots",
    "<|im_end|>",
    "<|endoftext|>",
};

// dapo's own last_boxed_only_string: only "\boxed{" counts (no \fbox).
std::optional<std::string> dapo_last_boxed(std::string_view text) {
  size_t idx = text.rfind("\\boxed{");
  if (idx == std::string_view::npos) return std::nullopt;
  int open = 0;
  for (size_t i = idx; i < text.size(); ++i) {
    if (text[i] == '{') ++open;
    if (text[i] == '}' && --open == 0) return std::string(text.substr(idx, i + 1 - idx));
  }
  return std::nullopt;
}

bool is_ascii_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::string normalize_final_answer(std::string_view input) {
  std::string a = split(input, "=").back();
  for (const auto& [before, after] : kSubstitutions) a = replace_all(a, before, after);
  for (auto expr : kRemovedExpressions) a = replace_all(a, expr, "");

  static const Regex dollars("(.*?)(\\$)(.*?)(\\$)(.*)");
  static const Regex text("(\\\\text\\{)(.*?)(\\})");
  static const Regex textbf("(\\\\textbf\\{)(.*?)(\\})");
  static const Regex overline("(\\\\overline\\{)(.*?)(\\})");
  static const Regex boxed("(\\\\boxed\\{)(.*)(\\})");
  static const Regex frac("(frac)([^{])(.)");
  static const Regex sqrt("(sqrt)([^{])");
  a = dollars.sub("$\\3$", a);
  a = text.sub("\\2", a);
  a = textbf.sub("\\2", a);
  a = overline.sub("\\2", a);
  a = boxed.sub("\\2", a);
  a = frac.sub("frac{\\2}{\\3}", a);
  a = sqrt.sub("sqrt{\\2}", a);
  a = replace_all(a, "$", "");
  if (is_ascii_digits(replace_all(a, ",", ""))) a = replace_all(a, ",", "");
  return strip(a);
}

DapoScore dapo_compute_score(std::string_view solution_in, const std::string& ground_truth,
                             bool strict_box_verify) {
  std::string solution = utf8_last_chars(solution_in, 300);
  DapoScore out;
  if (strict_box_verify) {
    std::string tail = utf8_last_chars(solution, 100);
    auto boxed = dapo_last_boxed(tail);
    if (boxed) out.pred = boxed->substr(7, boxed->size() - 8);
    out.acc = out.pred && *out.pred == ground_truth;
  } else {
    static const Regex answer("(?i)Answer\\s*:\\s*([^\\n]+)");
    auto matches = answer.findall(solution);
    out.pred = normalize_final_answer(matches.empty() ? std::string("[INVALID]") : matches.back());
    std::string gt = normalize_final_answer(ground_truth);
    auto value = python_float(gt);
    if (!value || !std::isfinite(*value)) {
      throw Error("dapo reward: the label '" + ground_truth +
                  "' is not a number (dapo answers are integers)");
    }
    out.acc = *out.pred == python_trunc_int_str(*value);
  }
  out.score = out.acc ? 1.0 : -1.0;
  return out;
}

}  // namespace vime::rm
