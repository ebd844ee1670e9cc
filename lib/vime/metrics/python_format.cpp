#include "vime/metrics/python_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "vime/core/python_float.hpp"
#include "vime/error.hpp"

namespace vime::metrics {

double python_round(double value, int ndigits) {
  if (!std::isfinite(value)) return value;
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, "%.*f", ndigits, value);
  return std::strtod(buffer, nullptr);
}

std::string python_str_round(const Json& number, int ndigits) {
  if (number.is_bool()) return number.as_bool() ? "1" : "0";
  if (number.is_int()) return std::to_string(number.as_int());
  if (!number.is_number())
    throw Error(std::string("expected a number to round, got ") + number.type_name());
  return core::python_float_repr(python_round(number.as_double(), ndigits));
}

}  // namespace vime::metrics
