// Numbers spelled as Python prints them, for metric names and filter reasons that slime builds
// with str(round(x, 1)) ("zero_std/count_1.0", "zero_std_0").
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime::metrics {

// repr(float): shortest round-trip digits; fixed notation with at least one decimal for
// 1e-4 <= |x| < 1e16, else "1e+16" / "1.5e-05"; "nan", "inf", "-inf".
std::string python_float_repr(double value);
// round(x, ndigits) for a float: correctly rounded, ties to even on the exact binary value.
double python_round(double value, int ndigits);
// str(round(v, ndigits)) for a JSON number: an integer (or bool) stays an integer ("1"), a float
// is rounded and printed as repr ("1.0"). Throws vime::Error for a non-number.
std::string python_str_round(const Json& number, int ndigits);

}  // namespace vime::metrics
