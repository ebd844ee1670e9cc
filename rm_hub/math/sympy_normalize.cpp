#include "math/sympy_normalize.hpp"

#include <set>

#include "common/py_text.hpp"
#include "math/latex_to_text.hpp"
#include "vime/regex.hpp"

namespace vime::rm {
namespace {

constexpr const char* kUnits[] = {"degree", "cm",   "centimeter", "meter", "mile",  "second",
                                  "minute", "hour", "day",        "week",  "month", "year",
                                  "foot",   "feet", "inch",       "yard"};

std::string parse_latex(std::string_view input) {
  std::string expr = replace_all(input, "\\tfrac", "\\frac");
  expr = replace_all(expr, "\\dfrac", "\\frac");
  expr = replace_all(expr, "\\frac", " \\frac");  // mixed numbers: 7\frac{3}{4} -> 7 3/4
  expr = latex_to_text(expr);
  expr = replace_all(expr, "√", "sqrt");
  expr = replace_all(expr, "π", "pi");
  expr = replace_all(expr, "∞", "inf");
  expr = replace_all(expr, "∪", "U");
  expr = replace_all(expr, "·", "*");
  expr = replace_all(expr, "×", "*");
  return strip(expr);
}

std::string str_to_int(std::string_view x) {
  auto v = python_float(replace_all(x, ",", ""));
  return python_trunc_int_str(*v);
}

}  // namespace

std::string strip_properly_formatted_commas(std::string_view input) {
  static const Regex re("(\\d)(,)(\\d\\d\\d)($|\\D)");
  std::string expr(input);
  while (true) {
    std::string next = re.sub("\\1\\3\\4", expr);
    if (next == expr) return next;
    expr = std::move(next);
  }
}

std::optional<std::string> sympy_normalize(const std::optional<std::string>& input) {
  if (!input) return std::nullopt;
  std::string expr = *input;
  static const Regex text_re("^\\\\text\\{(?P<text>.+?)\\}$");
  if (auto m = text_re.search(expr)) expr = *(*m)[1];

  expr = replace_all(expr, "\\%", "%");
  expr = replace_all(expr, "\\$", "$");
  expr = replace_all(expr, "$", "");
  expr = replace_all(expr, "%", "");
  expr = replace_all(expr, " or ", " , ");
  expr = replace_all(expr, " and ", " , ");
  expr = replace_all(expr, "million", "*10^6");
  expr = replace_all(expr, "billion", "*10^9");
  expr = replace_all(expr, "trillion", "*10^12");

  static const std::vector<std::unique_ptr<Regex>> unit_res = [] {
    std::vector<std::unique_ptr<Regex>> v;
    for (const char* unit : kUnits) {
      v.push_back(std::make_unique<Regex>(std::string(unit) + "(es)?(s)? *(\\^[0-9]+)?"));
    }
    return v;
  }();
  for (const auto& re : unit_res) expr = re->sub("", expr);
  static const Regex circ_re("\\^ *\\\\circ");
  expr = circ_re.sub("", expr);

  if (!expr.empty() && expr.front() == '{' && expr.back() == '}') {
    expr = expr.substr(1, expr.size() - 2);
  }
  static const Regex comma_space_re(",\\\\! *");
  expr = comma_space_re.sub("", expr);
  if (auto v = python_float(expr); v && python_is_int(*v)) expr = python_round_int_str(*v);
  if (contains(expr, "\\")) expr = parse_latex(expr);

  static const Regex minus_re("- *");
  expr = minus_re.sub("-", expr);
  static const Regex mixed_re("([0-9]) +([0-9])");
  expr = mixed_re.sub("\\1+\\2", expr);
  expr = replace_all(expr, " ", "");
  expr = replace_all(expr, "{", "");
  expr = replace_all(expr, "}", "");
  expr = lower(expr);
  if (str_is_int(expr)) expr = str_to_int(expr);
  return expr;
}

std::vector<std::string> split_tuple(std::string_view input) {
  std::string expr = strip_properly_formatted_commas(input);
  if (expr.empty()) return {};
  auto is_tuple_char = [](char c) { return c == '(' || c == ')' || c == '[' || c == ']'; };
  bool inner_clean = true;
  if (utf8_length(expr) > 2) {
    for (size_t i = 1; i + 1 < expr.size(); ++i)
      if (is_tuple_char(expr[i])) inner_clean = false;
  }
  if (utf8_length(expr) > 2 && is_tuple_char(expr.front()) && is_tuple_char(expr.back()) &&
      inner_clean) {
    std::vector<std::string> elems;
    for (auto& e : split(std::string_view(expr).substr(1, expr.size() - 2), ",")) {
      elems.push_back(strip(e));
    }
    return elems;
  }
  return {expr};
}

bool is_frac(std::string_view expr) {
  static const Regex re("^-?[0-9]+.?/0*[1-9][0-9]*.?$");
  return re.matches_anywhere(expr);
}

bool str_is_int(std::string_view x) {
  auto v = python_float(strip_properly_formatted_commas(x));
  return v && python_is_int(*v);
}

bool should_allow_eval(std::string_view input) {
  std::string expr = replace_all(input, "sqrt", "");
  expr = replace_all(expr, "frac", "");
  std::set<char32_t> letters;
  for (size_t i = 0; i < expr.size(); i += utf8_char_size(expr, i)) {
    char32_t cp = decode_utf8(expr, i);
    if (is_alpha_codepoint(cp)) letters.insert(cp);
  }
  if (letters.size() > 2) return false;
  if (contains(input, "^{") || contains(input, "^(")) return false;
  static const Regex bad1("\\^[0-9]+\\^");
  static const Regex bad2("\\^[0-9][0-9]+");
  return !bad1.matches_anywhere(input) && !bad2.matches_anywhere(input);
}

}  // namespace vime::rm
