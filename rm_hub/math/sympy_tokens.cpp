#include "math/sympy_tokens.hpp"

#include "common/py_text.hpp"

namespace vime::rm::sympy {
namespace {

bool known_name(const std::string& n) {
  static const char* kKnown[] = {"sqrt", "pi", "ln", "log", "oo",  "re", "im",
                                 "li",   "ff", "rf", "id",  "zoo", "nan"};
  for (const char* k : kKnown)
    if (n == k) return true;
  return false;
}

// sympy's split_symbols: a name it does not know ("xy", "x2") becomes one token per letter and per
// digit run, which implicit multiplication then joins at the same precedence as '/' (10/xy is
// 10/x*y).
void push_name(std::vector<Token>& out, const std::string& n) {
  if (known_name(n) || n.find('_') != std::string::npos || utf8_length(n) == 1) {
    out.push_back({Tok::kName, n});
    return;
  }
  size_t i = 0;
  while (i < n.size()) {
    if (n[i] >= '0' && n[i] <= '9') {
      size_t start = i;
      while (i < n.size() && n[i] >= '0' && n[i] <= '9') ++i;
      out.push_back({Tok::kNumber, n.substr(start, i - start)});
    } else {
      size_t len = utf8_char_size(n, i);
      out.push_back({Tok::kName, n.substr(i, len)});
      i += len;
    }
  }
}

}  // namespace

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto is_digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (is_digit(i) || (c == '.' && is_digit(i + 1))) {
      size_t start = i;
      while (is_digit(i) || (s[i] == '_' && is_digit(i + 1))) ++i;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (is_digit(i) || (s[i] == '_' && is_digit(i + 1))) ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t k = i + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (is_digit(k)) {
          i = k;
          while (is_digit(i)) ++i;
        }
      }
      if (i < s.size() && (s[i] == 'j' || s[i] == 'J')) throw NotEvaluable{};  // imaginary literal
      std::string number(s.substr(start, i - start));
      bool is_integer = number.find_first_of(".eE") == std::string::npos;
      size_t zeros = number.find_first_not_of("0_");
      if (is_integer && number[0] == '0' && zeros != std::string::npos) {
        // Python allows no leading zeros in integers: "05" is the tokens 0 and 5 (0*5 for sympy).
        out.push_back({Tok::kNumber, number.substr(0, zeros)});
        i = start + zeros;
        continue;
      }
      out.push_back({Tok::kNumber, number});
      continue;
    }
    char32_t cp = decode_utf8(s, i);
    if (c == '_' || is_alpha_codepoint(cp)) {
      size_t start = i;
      while (i < s.size()) {
        char32_t d = decode_utf8(s, i);
        if (s[i] == '_' || is_alpha_codepoint(d) || is_digit(i)) {
          i += utf8_char_size(s, i);
        } else {
          break;
        }
      }
      push_name(out, std::string(s.substr(start, i - start)));
      continue;
    }
    if (s.substr(i, 2) == "**" || s.substr(i, 2) == "//") {
      out.push_back({Tok::kOp, std::string(s.substr(i, 2))});
      i += 2;
      continue;
    }
    if (c == '+' || c == '-' || c == '*' || c == '/' || c == '(' || c == ')' || c == '!' ||
        c == ',') {
      out.push_back({Tok::kOp, std::string(1, c)});
      ++i;
      continue;
    }
    throw NotEvaluable{};  // '=', '<', '[', '|', quotes, other symbols: a syntax error for sympy
  }
  out.push_back({Tok::kEnd, ""});
  return out;
}

}  // namespace vime::rm::sympy
