#include "math/sympy_value.hpp"

#include <optional>
#include <vector>

#include "math/sympy_tokens.hpp"

namespace vime::rm::sympy {

Value from_rational(const cpp_rational& q) {
  Value r;
  r.q = q;
  double d = static_cast<double>(q);
  r.v.fill(Complex(d, 0.0));
  return r;
}

namespace {
Value combine(const Value& a, const Value& b) {
  Value r;
  r.exact = a.exact && b.exact;
  r.symbolic = a.symbolic || b.symbolic;
  r.has_float = a.has_float || b.has_float;
  r.float_power = a.float_power || b.float_power;
  return r;
}

bool bits_ok(const cpp_rational& q) {
  return boost::multiprecision::msb(abs(numerator(q)) + 1) < 4096 &&
         boost::multiprecision::msb(denominator(q)) < 4096;
}
}  // namespace

Value add(const Value& a, const Value& b, int sign) {
  Value r = combine(a, b);
  if (r.exact) r.q = sign > 0 ? cpp_rational(a.q + b.q) : cpp_rational(a.q - b.q);
  for (size_t k = 0; k < kPoints; ++k) r.v[k] = sign > 0 ? a.v[k] + b.v[k] : a.v[k] - b.v[k];
  if (r.exact) r.v.fill(Complex(static_cast<double>(r.q), 0.0));
  return r;
}

Value mul(const Value& a, const Value& b) {
  Value r = combine(a, b);
  if (r.exact) {
    r.q = a.q * b.q;
    if (!bits_ok(r.q)) throw NotEvaluable{};
    r.v.fill(Complex(static_cast<double>(r.q), 0.0));
    return r;
  }
  for (size_t k = 0; k < kPoints; ++k) r.v[k] = a.v[k] * b.v[k];
  return r;
}

Value div(const Value& a, const Value& b) {
  if (b.exact && b.q == 0) throw NotEvaluable{};  // zoo
  Value r = combine(a, b);
  if (r.exact) {
    r.q = a.q / b.q;
    r.v.fill(Complex(static_cast<double>(r.q), 0.0));
    return r;
  }
  // sympy rounds like Python's operators on its numbers: Float / x divides once, but an exact
  // Integer or Rational divided by a Float is multiplied by the Float's reciprocal (so 7/3.0 is
  // not 7/3 in sympy).
  const bool by_reciprocal = !a.has_float && !a.symbolic && b.has_float && !b.symbolic;
  for (size_t k = 0; k < kPoints; ++k) {
    r.v[k] = by_reciprocal ? a.v[k] * (Complex(1.0, 0.0) / b.v[k]) : a.v[k] / b.v[k];
  }
  return r;
}

// Exact integer k-th root of a non-negative integer, if there is one.
namespace {
std::optional<cpp_int> exact_root(const cpp_int& n, unsigned k) {
  if (n < 0) return std::nullopt;
  if (n < 2) return n;
  double guess = std::pow(static_cast<double>(n), 1.0 / k);
  if (!std::isfinite(guess)) return std::nullopt;
  cpp_int g(std::llround(guess));
  for (cpp_int c = (g > 2 ? g - 2 : cpp_int(0)); c <= g + 2; ++c) {
    if (boost::multiprecision::pow(c, k) == n) return c;
  }
  return std::nullopt;
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

// The sign sqrt(n) takes in each world: the product over the primes of odd exponent in n (and -1
// for negative n) of that prime's sign in the world.
namespace {
std::array<double, kWorlds> conjugation_signs(cpp_int n) {
  std::vector<uint64_t> odd_primes;
  if (n < 0) {
    odd_primes.push_back(~0ull);
    n = -n;
  }
  for (uint64_t p = 2; p < 100000 && cpp_int(p) * p <= n; ++p) {
    int exponent = 0;
    while (n % p == 0) {
      n /= p;
      ++exponent;
    }
    if (exponent % 2 == 1) odd_primes.push_back(p);
  }
  if (n > 1) odd_primes.push_back(static_cast<uint64_t>(n & cpp_int(~0ull)));
  std::array<double, kWorlds> signs;
  signs.fill(1.0);
  for (uint64_t p : odd_primes) {
    uint64_t h = mix(p);
    for (size_t w = 1; w < kWorlds; ++w)
      if ((h >> w) & 1) signs[w] = -signs[w];
  }
  return signs;
}
}  // namespace

Value power(const Value& a, const Value& b) {
  Value r = combine(a, b);
  if (a.exact && b.exact) {
    const cpp_rational& e = b.q;
    if (denominator(e) == 1) {
      cpp_int n = numerator(e);
      if (abs(n) > 4096) throw NotEvaluable{};
      if (a.q == 0 && n < 0) throw NotEvaluable{};
      unsigned un = static_cast<unsigned>(abs(n));
      cpp_rational base = n < 0 ? cpp_rational(1) / a.q : a.q;
      cpp_rational p(boost::multiprecision::pow(numerator(base), un),
                     boost::multiprecision::pow(denominator(base), un));
      if (!bits_ok(p)) throw NotEvaluable{};
      return from_rational(p);
    }
    // A rational power of a rational that is itself rational (4^(1/2), 8^(2/3)).
    if (a.q > 0 && denominator(e) <= 64 && abs(numerator(e)) <= 64) {
      unsigned k = static_cast<unsigned>(denominator(e));
      auto rn = exact_root(numerator(a.q), k);
      auto rd = exact_root(denominator(a.q), k);
      if (rn && rd) {
        return power(from_rational(cpp_rational(*rn, *rd)),
                     from_rational(cpp_rational(numerator(e))));
      }
    }
  }
  r.exact = false;
  // A Float exponent of integral value raises numbers like an integer (2^3.0 = 8.0); on a symbol
  // it stays apart (sympy does not equate x^3.0 with x^3).
  const bool integer_exponent =
      (b.exact && denominator(b.q) == 1) ||
      (!b.exact && !b.symbolic && !a.symbolic && b.v[0].imag() == 0 &&
       std::fabs(b.v[0].real()) <= 4096 && b.v[0].real() == std::nearbyint(b.v[0].real()));
  const bool numbers_only = !a.symbolic && !b.symbolic;
  if (integer_exponent) {
    // x^2, 0.5^2: no new irrational
  } else if (a.has_float || b.has_float) {
    // A Float power of numbers is just a Float (2^0.5, sqrt(0.25)); one involving a symbol or an
    // irrational (x^0.5) stays a term of its own that never merges with x^(1/2).
    if (!numbers_only) r.float_power = true;
  } else {
    r.symbolic = true;  // an irrational like 2^(1/2)
  }
  long long n = 0;
  if (integer_exponent) {
    if (b.exact) {
      if (abs(numerator(b.q)) > 4096) throw NotEvaluable{};
      n = static_cast<long long>(numerator(b.q));
    } else {
      n = static_cast<long long>(b.v[0].real());
    }
  }
  for (size_t k = 0; k < kPoints; ++k) {
    const Complex base = a.v[k], exponent = b.v[k];
    if (integer_exponent) {
      if (base == Complex(0, 0) && n < 0) throw NotEvaluable{};
      Complex result(1.0, 0.0), factor = base;
      for (long long m = n < 0 ? -n : n; m > 0; m >>= 1) {  // exact for small integer powers
        if (m & 1) result *= factor;
        factor *= factor;
      }
      r.v[k] = n < 0 ? Complex(1.0, 0.0) / result : result;
    } else if (base == Complex(0, 0)) {
      if (b.symbolic) {
        r.v[k] = std::exp(exponent) * 0.377;  // 0**b stays a term of its own in sympy
      } else {
        if (exponent.real() <= 0) throw NotEvaluable{};
        r.v[k] = 0;
      }
    } else if (base.imag() == 0 && base.real() > 0 && exponent.imag() == 0) {
      r.v[k] = Complex(std::pow(base.real(), exponent.real()), 0.0);
    } else {
      r.v[k] = std::pow(base, exponent);
    }
  }
  if (a.exact && b.exact && denominator(b.q) == 2) {
    // A square root of a rational: conjugate it in the other worlds.
    auto signs = conjugation_signs(numerator(a.q) * denominator(a.q));
    for (size_t k = kPointsPerWorld; k < kPoints; ++k) r.v[k] *= signs[k / kPointsPerWorld];
  }
  if (r.float_power) {
    // Tag the Float power by its base and exponent: the same power on both sides still cancels
    // (sympy collects identical terms), but it no longer equals an exact radical numerically.
    double h = std::fmod(std::fabs(a.v[0].real() * 12.9898 + a.v[0].imag() * 4.1414 +
                                   b.v[0].real() * 78.233 + b.v[0].imag() * 3.7719),
                         1.0);
    for (auto& x : r.v) x *= 1.0 + 1e-3 * (1.0 + h);
  }
  return r;
}

Value sqrt_of(const Value& a) { return power(a, from_rational(cpp_rational(1, 2))); }

Value factorial_of(const Value& a) {
  if (!a.exact || denominator(a.q) != 1 || a.q < 0 || a.q > 200) throw NotEvaluable{};
  cpp_int f = 1;
  for (int k = 2; k <= static_cast<int>(numerator(a.q)); ++k) f *= k;
  return from_rational(cpp_rational(f));
}

Value from_number(const std::string& text) {
  std::string clean;
  for (char c : text)
    if (c != '_') clean.push_back(c);
  bool is_integer = clean.find_first_of(".eE") == std::string::npos;
  if (is_integer) return from_rational(cpp_rational(cpp_int(clean)));
  Value r;
  r.exact = false;
  r.has_float = true;
  r.v.fill(Complex(std::strtod(clean.c_str(), nullptr), 0.0));
  return r;
}

Value pi_value() {
  Value r;
  r.exact = false;
  r.symbolic = true;
  for (size_t k = 0; k < kPoints; ++k) r.v[k] = Complex(kPiInWorld[k / kPointsPerWorld], 0.0);
  return r;
}

Value symbol_value(size_t index) {
  Value r;
  r.exact = false;
  r.symbolic = true;
  for (size_t k = 0; k < kPoints; ++k) {
    size_t point = k % kPointsPerWorld;
    if (index < 3) {
      r.v[k] = Complex(kPointRe[index][point], kPointIm[index][point]);
    } else {  // names split into many letters ("pisqrt"): more symbols, pseudo-random points
      uint64_t h = mix(index * 131 + point);
      r.v[k] = Complex(0.3 + static_cast<double>(h & 0xFFFF) / 65536.0 * 1.4,
                       static_cast<double>((h >> 16) & 0xFFFF) / 65536.0 * 2.0 - 1.0);
    }
  }
  return r;
}

Value log_of(const Value& a) {
  if (a.exact && a.q == 1) return from_rational(0);
  Value r = a;
  r.exact = false;
  r.symbolic = true;
  for (auto& x : r.v) {
    if (x == Complex(0, 0)) throw NotEvaluable{};
    x = std::log(x);
  }
  return r;
}

}  // namespace vime::rm::sympy
