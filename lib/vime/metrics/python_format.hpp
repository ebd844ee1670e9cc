// str(round(x, ndigits)) as Python spells it, for metric names and filter reasons that slime builds
// that way ("zero_std/count_1.0", "zero_std_0"). repr itself is core::python_float_repr.
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime::metrics {

// round(x, ndigits) for a float: correctly rounded, ties to even on the exact binary value.
double python_round(double value, int ndigits);
// str(round(v, ndigits)) for a JSON number: an integer (or bool) stays an integer ("1"), a float
// is rounded and printed as repr ("1.0"). Throws vime::Error for a non-number.
std::string python_str_round(const Json& number, int ndigits);

}  // namespace vime::metrics
