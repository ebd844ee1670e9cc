#include "vime/python_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "vime/error.hpp"

namespace vime {

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";

  // Shortest round-trip digits in scientific form ("-1.2345e+02"), then Python's layout.
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  std::string text(buffer, result.ptr);
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string digits = text.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'

  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    char exponent_text[16];
    std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out += exponent_text;
  }
  return negative ? "-" + out : out;
}

std::string python_str_round(const Json& number, int ndigits) {
  if (number.is_bool()) return number.as_bool() ? "1" : "0";
  if (number.is_int()) return std::to_string(number.as_int());
  if (!number.is_number())
    throw Error(std::string("expected a number to round, got ") + number.type_name());
  // round(x, ndigits) for a float: correctly rounded, ties to even on the exact binary value.
  double rounded = number.as_double();
  if (std::isfinite(rounded)) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f", ndigits, rounded);
    rounded = std::strtod(buffer, nullptr);
  }
  return python_float_repr(rounded);
}

}  // namespace vime
