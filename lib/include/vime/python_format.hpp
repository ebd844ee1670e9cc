// Numbers spelled as Python prints them, for plugins that build text the way slime's Python code
// does: str(label) of a float label, filter reasons and metric names made with str(round(x, 1)).
// lib/vime/core/python_format.cpp implements it.
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime {

// repr(x) (== str(x)) for a Python float: "0.1", "1e+16", "1.5e-05", "-0.0", "nan", "inf".
std::string python_float_repr(double x);
// str(round(v, ndigits)) for a JSON number: an integer (or bool) stays an integer ("1"), a float
// is rounded and printed as repr ("1.0"). Throws vime::Error for a non-number.
std::string python_str_round(const Json& number, int ndigits);

}  // namespace vime
