#include "math/mathd_normalize.hpp"

#include <stdexcept>

#include "common/py_text.hpp"

namespace vime::rm {
namespace {

// Where slime's _strip_string raises (IndexError, AssertionError); mathd_normalize_answer then
// returns its input unchanged.
struct StripFailed : std::exception {};

std::string first_char(std::string_view s) {
  if (s.empty()) throw StripFailed{};
  return std::string(s.substr(0, utf8_char_size(s, 0)));
}

std::string fix_fracs(const std::string& string) {
  auto substrs = split(string, "\\frac");
  std::string new_str = substrs[0];
  for (size_t k = 1; k < substrs.size(); ++k) {
    const std::string& substr = substrs[k];
    new_str += "\\frac";
    if (first_char(substr) == "{") {
      new_str += substr;
      continue;
    }
    if (utf8_length(substr) < 2) return string;
    std::string a = first_char(substr);
    std::string_view rest = std::string_view(substr).substr(a.size());
    std::string b = first_char(rest);
    std::string post(rest.substr(b.size()));
    if (b != "{") {
      new_str += "{" + a + "}{" + b + "}" + post;
    } else {
      new_str += "{" + a + "}" + b + post;
    }
  }
  return new_str;
}

bool parse_python_int(const std::string& s, long long& out) {
  // int(s) accepts surrounding spaces, a sign and '_' between digits; the caller then requires
  // "{}/{}".format(a, b) == string, so only canonical forms survive anyway.
  std::string t = strip(s);
  if (t.empty()) return false;
  size_t i = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  if (i >= t.size()) return false;
  for (size_t k = i; k < t.size(); ++k)
    if (t[k] < '0' || t[k] > '9') return false;
  if (t.size() > 18) return false;
  out = std::stoll(t);
  return true;
}

std::string fix_a_slash_b(const std::string& string) {
  auto parts = split(string, "/");
  if (parts.size() != 2) return string;
  long long a = 0, b = 0;
  if (!parse_python_int(parts[0], a) || !parse_python_int(parts[1], b)) return string;
  if (string != std::to_string(a) + "/" + std::to_string(b)) return string;
  return "\\frac{" + std::to_string(a) + "}{" + std::to_string(b) + "}";
}

std::string remove_right_units(const std::string& string) {
  if (!contains(string, "\\text{ ")) return string;
  auto splits = split(string, "\\text{ ");
  if (splits.size() != 2) throw StripFailed{};
  return splits[0];
}

std::string fix_sqrt(const std::string& string) {
  if (!contains(string, "\\sqrt")) return string;
  auto splits = split(string, "\\sqrt");
  std::string out = splits[0];
  for (size_t k = 1; k < splits.size(); ++k) {
    const std::string& s = splits[k];
    std::string a = first_char(s);
    if (a != "{") {
      out += "\\sqrt{" + a + "}" + s.substr(a.size());
    } else {
      out += "\\sqrt" + s;
    }
  }
  return out;
}

}  // namespace

std::string strip_string(std::string_view input) {
  std::string s = replace_all(input, "\n", "");
  s = replace_all(s, "\\!", "");
  s = replace_all(s, "\\\\", "\\");
  s = replace_all(s, "tfrac", "frac");
  s = replace_all(s, "dfrac", "frac");
  s = replace_all(s, "\\left", "");
  s = replace_all(s, "\\right", "");
  s = replace_all(s, "^{\\circ}", "");
  s = replace_all(s, "^\\circ", "");
  s = replace_all(s, "\\$", "");
  s = remove_right_units(s);
  s = replace_all(s, "\\%", "");
  s = replace_all(s, " .", " 0.");
  s = replace_all(s, "{.", "{0.");
  if (s.empty()) return s;
  if (s[0] == '.') s = "0" + s;
  auto eq = split(s, "=");
  if (eq.size() == 2 && utf8_length(eq[0]) <= 2) s = eq[1];
  s = fix_sqrt(s);
  s = replace_all(s, " ", "");
  s = fix_fracs(s);
  if (s == "0.5") s = "\\frac{1}{2}";
  s = fix_a_slash_b(s);
  return s;
}

std::optional<std::string> mathd_normalize_answer(const std::optional<std::string>& answer) {
  if (!answer) return std::nullopt;
  std::string a = strip(*answer);
  // re.search("^\\text\{(?P<text>.+?)\}$", answer): '.' stops at newlines.
  if (a.starts_with("\\text{") && a.size() > 7 && a.back() == '}' &&
      a.substr(6, a.size() - 7).find('\n') == std::string::npos) {
    a = strip(a.substr(6, a.size() - 7));
  }
  try {
    return strip_string(a);
  } catch (const StripFailed&) {
    return a;
  }
}

}  // namespace vime::rm
