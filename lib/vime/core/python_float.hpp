// Floats spelled exactly as Python prints them: metric names and filter reasons built with
// str(round(x, 1)), Jinja templates that print floats, and graders that call str(label).
#pragma once

#include <string>

namespace vime::core {

// repr(x) (== str(x)) for a Python float: the shortest digits that read back as x; fixed notation
// with at least one decimal for 1e-4 <= |x| < 1e16 ("0.0001", "1e+16"), else "1.5e-05" with a
// two-digit exponent at least; "-0.0", "nan" (any sign), "inf", "-inf".
std::string python_float_repr(double x);

}  // namespace vime::core
