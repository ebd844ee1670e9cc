#include "common/py_text.hpp"

#include <utf8proc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace vime::rm {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text, pos, std::string_view::npos);
  return out;
}

std::vector<std::string> split(std::string_view text, std::string_view sep) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(sep, pos);
    if (hit == std::string_view::npos) break;
    parts.emplace_back(text.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  parts.emplace_back(text.substr(pos));
  return parts;
}

namespace {
bool is_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}
}  // namespace

std::vector<std::string> split_whitespace(std::string_view text) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) parts.emplace_back(text.substr(start, i - start));
  }
  return parts;
}

std::string strip(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  return std::string(text.substr(b, e - b));
}

char32_t decode_utf8(std::string_view text, size_t i) {
  utf8proc_int32_t cp = 0;
  auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                            static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
  return n < 1 ? static_cast<char32_t>(static_cast<unsigned char>(text[i]))
               : static_cast<char32_t>(cp);
}

size_t utf8_char_size(std::string_view text, size_t i) {
  utf8proc_int32_t cp = 0;
  auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                            static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
  return n < 1 ? 1 : static_cast<size_t>(n);
}

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); i += utf8_char_size(text, i)) ++n;
  return n;
}

std::string utf8_last_chars(std::string_view text, size_t n) {
  size_t total = utf8_length(text);
  if (total <= n) return std::string(text);
  size_t skip = total - n, i = 0;
  for (size_t k = 0; k < skip; ++k) i += utf8_char_size(text, i);
  return std::string(text.substr(i));
}

std::string lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
      ++i;
      continue;
    }
    size_t n = utf8_char_size(text, i);
    char32_t cp = decode_utf8(text, i);
    utf8proc_uint8_t buf[4];
    auto len = utf8proc_encode_char(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)), buf);
    if (len > 0 && n > 1) {
      out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(len));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

bool is_alpha_codepoint(char32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL ||
         cat == UTF8PROC_CATEGORY_LT || cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_LO;
}

std::optional<double> python_float(std::string_view text) {
  std::string s = strip(text);
  if (s.empty()) return std::nullopt;
  std::string body = s;
  std::string sign;
  if (body[0] == '+' || body[0] == '-') {
    sign = body.substr(0, 1);
    body = body.substr(1);
  }
  std::string low = lower(body);
  if (low == "inf" || low == "infinity") return sign == "-" ? -INFINITY : INFINITY;
  if (low == "nan") return NAN;
  // digits ('_' only between digits), optional '.', digits, optional exponent.
  std::string clean;
  size_t i = 0, digits = 0;
  auto take_digits = [&](bool& any) {
    any = false;
    while (i < body.size()) {
      if (body[i] >= '0' && body[i] <= '9') {
        clean.push_back(body[i++]);
        any = true;
      } else if (body[i] == '_' && any && i + 1 < body.size() && body[i + 1] >= '0' &&
                 body[i + 1] <= '9') {
        ++i;
      } else {
        break;
      }
    }
    return any;
  };
  bool int_digits = false, frac_digits = false;
  take_digits(int_digits);
  if (i < body.size() && body[i] == '.') {
    clean.push_back('.');
    ++i;
    take_digits(frac_digits);
  }
  if (!int_digits && !frac_digits) return std::nullopt;
  digits = 1;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    clean.push_back('e');
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) clean.push_back(body[i++]);
    bool exp_digits = false;
    take_digits(exp_digits);
    if (!exp_digits) return std::nullopt;
  }
  if (i != body.size() || digits == 0) return std::nullopt;
  return std::strtod((sign + clean).c_str(), nullptr);
}

bool python_is_int(double x) {
  if (!std::isfinite(x)) return false;
  return std::fabs(x - std::nearbyint(x)) <= 1e-7;  // nearbyint rounds half to even, like round()
}

namespace {
std::string exact_int_str(double integral) {
  if (std::fabs(integral) < 9.0e15) return std::to_string(static_cast<long long>(integral));
  // Python's int(x): glibc prints a double's exact decimal value, and every double this large is an
  // integer.
  if (!std::isfinite(integral)) {
    throw std::runtime_error("Cannot convert a non-finite number to an integer.");
  }
  char digits[320];
  std::snprintf(digits, sizeof digits, "%.0f", integral);
  return digits;
}
}  // namespace

std::string python_round_int_str(double x) { return exact_int_str(std::nearbyint(x)); }
std::string python_trunc_int_str(double x) { return exact_int_str(std::trunc(x)); }

}  // namespace vime::rm
