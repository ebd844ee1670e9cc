// The values the math engine computes with: exact big rationals while only integers and fractions
// are involved, else complex doubles at every sample point of every "world" (see below), with the
// flags that track what sympy would have made of the expression. Internal to the math engine.
#pragma once

#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <complex>
#include <string>

namespace vime::rm::sympy {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;
using Complex = std::complex<double>;

// Every expression is evaluated in kWorlds "worlds" x kPointsPerWorld points. Symbols take complex
// values (both half-planes, so branch differences show), one per point. World 0 is the real one;
// in the others pi is another number and every square root of a rational is replaced by a Galois
// conjugate (sqrt(p) -> +-sqrt(p), one sign per prime and world). Identities sympy proves
// (2*sqrt(3) = sqrt(12), 2*pi = pi + pi) hold in every world; a decimal that merely approximates
// pi or sqrt(2) matches in world 0 only, as sympy never equates a Float with an irrational.
constexpr size_t kPointsPerWorld = 4;
constexpr size_t kWorlds = 6;
constexpr size_t kPoints = kPointsPerWorld * kWorlds;
constexpr double kPiInWorld[kWorlds] = {M_PI,      2.2360679, 3.7182818,
                                        1.6180339, 4.4721359, 2.6457513};
constexpr double kPointRe[3][kPointsPerWorld] = {
    {0.37, -1.13, 0.83, 1.71}, {-0.61, 0.93, 1.29, -0.27}, {1.07, 0.44, -0.79, 0.58}};
constexpr double kPointIm[3][kPointsPerWorld] = {
    {0.71, 0.29, -1.37, 0.22}, {0.48, -0.86, 0.17, -1.11}, {-0.33, 1.21, 0.66, -0.94}};

struct Value {
  bool exact = true;       // q holds the value exactly (integers, fractions)
  bool symbolic = false;   // depends on a symbol or an irrational (sqrt, pi)
  bool has_float = false;  // a decimal (sympy Float) took part
  // A non-integer power involving a Float and a symbol (x^0.5): sympy keeps it as a term that
  // never cancels against x^(1/2).
  bool float_power = false;
  cpp_rational q;                    // when exact
  std::array<Complex, kPoints> v{};  // the value at each sample point
};

Value from_rational(const cpp_rational& q);
Value from_number(const std::string& python_literal);  // "3" exact, "3.0" / "1e3" a Float
Value pi_value();
Value symbol_value(size_t index);  // the index-th distinct symbol of the expression
// Arithmetic as sympy evaluates it; each throws NotEvaluable where sympy would fail or give
// zoo/nan (division by zero, huge powers).
Value add(const Value& a, const Value& b, int sign);
Value mul(const Value& a, const Value& b);
Value div(const Value& a, const Value& b);
Value power(const Value& a, const Value& b);
Value sqrt_of(const Value& a);
Value log_of(const Value& a);
Value factorial_of(const Value& a);

}  // namespace vime::rm::sympy
