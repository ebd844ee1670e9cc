// What slime's are_equal_under_sympy decides, without sympy: parse "(gt)-(given)" the way sympy's
// parse_expr does with implicit multiplication (Python number and name rules, split symbols, ^ as
// **), then decide whether the difference is zero:
//   - exactly, with big rationals, when only integers, fractions and integer powers are involved;
//   - exactly in double arithmetic when decimals (sympy Floats) are involved, as sympy compares
//     Floats;
//   - numerically otherwise (symbols, sqrt, pi): the difference evaluated at several complex points
//     (sympy's symbols are complex, so sqrt(x^2) != x) must vanish to 1e-9 relative.
// Whatever sympy would refuse to parse or evaluate (tuples, '=', unknown functions, division by
// zero) is "not equal", like slime's bare except.
#pragma once

#include <string_view>

namespace vime::rm {

bool are_equal_under_sympy(std::string_view ground_truth_normalized,
                           std::string_view given_normalized);

}  // namespace vime::rm
