#include "math/sympy_equal.hpp"

#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/py_text.hpp"
#include "math/sympy_normalize.hpp"

namespace vime::rm {
namespace {

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
constexpr double kPiInWorld[kWorlds] = {M_PI, 2.2360679, 3.7182818, 1.6180339, 4.4721359, 2.6457513};
constexpr double kPointRe[3][kPointsPerWorld] = {{0.37, -1.13, 0.83, 1.71}, {-0.61, 0.93, 1.29, -0.27},
                                         {1.07, 0.44, -0.79, 0.58}};
constexpr double kPointIm[3][kPointsPerWorld] = {{0.71, 0.29, -1.37, 0.22}, {0.48, -0.86, 0.17, -1.11},
                                         {-0.33, 1.21, 0.66, -0.94}};

struct NotEvaluable {};  // sympy would raise (or produce nan/zoo): the answers are not equal

// ---- tokens (Python's tokenizer, as sympy's parse_expr sees them) ----

enum class Tok { kNumber, kName, kOp, kEnd };
struct Token {
  Tok type;
  std::string text;
};

bool known_name(const std::string& n) {
  static const char* kKnown[] = {"sqrt", "pi", "ln", "log", "oo", "re", "im", "li", "ff", "rf", "id", "zoo", "nan"};
  for (const char* k : kKnown)
    if (n == k) return true;
  return false;
}

// sympy's split_symbols: a name it does not know ("xy", "x2") becomes one token per letter and per
// digit run, which implicit multiplication then joins at the same precedence as '/' (10/xy is
// 10/x*y).
void push_name(std::vector<Token>& out, const std::string& n) {
  if (known_name(n) || n.find('_') != std::string::npos || utf8_length(n) == 1) {
    out.push_back({Tok::kName, n});
    return;
  }
  size_t i = 0;
  while (i < n.size()) {
    if (n[i] >= '0' && n[i] <= '9') {
      size_t start = i;
      while (i < n.size() && n[i] >= '0' && n[i] <= '9') ++i;
      out.push_back({Tok::kNumber, n.substr(start, i - start)});
    } else {
      size_t len = utf8_char_size(n, i);
      out.push_back({Tok::kName, n.substr(i, len)});
      i += len;
    }
  }
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto is_digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (is_digit(i) || (c == '.' && is_digit(i + 1))) {
      size_t start = i;
      while (is_digit(i) || (s[i] == '_' && is_digit(i + 1))) ++i;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (is_digit(i) || (s[i] == '_' && is_digit(i + 1))) ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t k = i + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (is_digit(k)) {
          i = k;
          while (is_digit(i)) ++i;
        }
      }
      if (i < s.size() && (s[i] == 'j' || s[i] == 'J')) throw NotEvaluable{};  // imaginary literal
      std::string number(s.substr(start, i - start));
      bool is_integer = number.find_first_of(".eE") == std::string::npos;
      size_t zeros = number.find_first_not_of("0_");
      if (is_integer && number[0] == '0' && zeros != std::string::npos) {
        // Python allows no leading zeros in integers: "05" is the tokens 0 and 5 (0*5 for sympy).
        out.push_back({Tok::kNumber, number.substr(0, zeros)});
        i = start + zeros;
        continue;
      }
      out.push_back({Tok::kNumber, number});
      continue;
    }
    char32_t cp = decode_utf8(s, i);
    if (c == '_' || is_alpha_codepoint(cp)) {
      size_t start = i;
      while (i < s.size()) {
        char32_t d = decode_utf8(s, i);
        if (s[i] == '_' || is_alpha_codepoint(d) || is_digit(i)) {
          i += utf8_char_size(s, i);
        } else {
          break;
        }
      }
      push_name(out, std::string(s.substr(start, i - start)));
      continue;
    }
    if (s.substr(i, 2) == "**" || s.substr(i, 2) == "//") {
      out.push_back({Tok::kOp, std::string(s.substr(i, 2))});
      i += 2;
      continue;
    }
    if (c == '+' || c == '-' || c == '*' || c == '/' || c == '(' || c == ')' || c == '!' ||
        c == ',') {
      out.push_back({Tok::kOp, std::string(1, c)});
      ++i;
      continue;
    }
    throw NotEvaluable{};  // '=', '<', '[', '|', quotes, other symbols: a syntax error for sympy
  }
  out.push_back({Tok::kEnd, ""});
  return out;
}

// ---- values ----

struct Value {
  bool exact = true;           // q holds the value exactly (integers, fractions)
  bool symbolic = false;       // depends on a symbol or an irrational (sqrt, pi)
  bool has_float = false;      // a decimal (sympy Float) took part
  // A non-integer power involving a Float (sqrt(1.25), 2^0.5, x^0.5): sympy evaluates or keeps it
  // as a Float power that never cancels against the exact radical on the other side.
  bool float_power = false;
  cpp_rational q;              // when exact
  std::array<Complex, kPoints> v{};  // the value at each sample point
};

Value from_rational(const cpp_rational& q) {
  Value r;
  r.q = q;
  double d = static_cast<double>(q);
  r.v.fill(Complex(d, 0.0));
  return r;
}

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

// The sign sqrt(n) takes in each world: the product over the primes of odd exponent in n (and -1
// for negative n) of that prime's sign in the world.
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
        return power(from_rational(cpp_rational(*rn, *rd)), from_rational(cpp_rational(numerator(e))));
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

// ---- parser (Python precedence; implicit multiplication as sympy inserts it) ----

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Value parse() {
    Value v = expr();
    if (peek().type != Tok::kEnd) throw NotEvaluable{};
    return v;
  }

  // For the scale of the final comparison: the two sides of a top-level a - b.
  std::optional<std::pair<Value, Value>> top_sides;

 private:
  const Token& peek() const { return t_[pos_]; }
  bool is_op(const char* op) const { return peek().type == Tok::kOp && peek().text == op; }
  void expect(const char* op) {
    if (!is_op(op)) throw NotEvaluable{};
    ++pos_;
  }
  bool starts_atom() const {
    return peek().type == Tok::kNumber || peek().type == Tok::kName || is_op("(");
  }

  Value expr() {
    if (++depth_ > 200) throw NotEvaluable{};
    Value v = term();
    while (is_op("+") || is_op("-")) {
      int sign = is_op("+") ? 1 : -1;
      ++pos_;
      Value rhs = term();
      if (depth_ == 1 && sign < 0 && peek().type == Tok::kEnd) top_sides = std::make_pair(v, rhs);
      v = add(v, rhs, sign);
    }
    --depth_;
    return v;
  }

  Value term() {
    Value v = unary();
    while (true) {
      if (is_op("*")) {
        ++pos_;
        v = mul(v, unary());
      } else if (is_op("/")) {
        ++pos_;
        v = div(v, unary());
      } else if (is_op("//")) {
        throw NotEvaluable{};
      } else if (starts_atom()) {
        v = mul(v, unary_no_sign());  // implicit multiplication: 2x, x(1+x), )(
      } else {
        return v;
      }
    }
  }

  Value unary() {
    // "----5" and "2**2**2..." recurse here without passing through expr(): bound them too.
    if (++unary_depth_ > 400) throw NotEvaluable{};
    Value v = unary_inner();
    --unary_depth_;
    return v;
  }

  Value unary_inner() {
    if (is_op("-")) {
      ++pos_;
      Value u = unary();
      return mul(from_rational(cpp_rational(-1)), u);
    }
    if (is_op("+")) {
      ++pos_;
      return unary();
    }
    return unary_no_sign();
  }

  Value unary_no_sign() {
    Value base = postfix();
    if (is_op("**")) {
      ++pos_;
      Value exponent = unary();
      return power(base, exponent);
    }
    return base;
  }

  Value postfix() {
    Value v = atom();
    while (is_op("!")) {
      ++pos_;
      v = factorial_of(v);
    }
    return v;
  }

  Value call_argument() {
    expect("(");
    Value v = expr();
    if (is_op(",")) throw NotEvaluable{};
    expect(")");
    return v;
  }

  Value atom() {
    const Token tok = peek();
    if (tok.type == Tok::kNumber) {
      ++pos_;
      return from_number(tok.text);
    }
    if (tok.type == Tok::kOp && tok.text == "(") {
      ++pos_;
      Value v = expr();
      if (is_op(",")) throw NotEvaluable{};  // a tuple: sympy cannot subtract it
      expect(")");
      return v;
    }
    if (tok.type != Tok::kName) throw NotEvaluable{};
    ++pos_;
    return name(tok.text);
  }

  Value name(const std::string& n) {
    if (n == "sqrt") return sqrt_of(call_argument());
    if (n == "pi") {
      Value r;
      r.exact = false;
      r.symbolic = true;
      for (size_t k = 0; k < kPoints; ++k) r.v[k] = Complex(kPiInWorld[k / kPointsPerWorld], 0.0);
      return r;
    }
    if (n == "ln" || n == "log") {
      Value a = call_argument();
      Value r = a;
      r.exact = false;
      r.symbolic = true;
      for (auto& x : r.v) {
        if (x == Complex(0, 0)) throw NotEvaluable{};
        x = std::log(x);
      }
      if (a.exact && a.q == 1) return from_rational(0);
      return r;
    }
    // Other names sympy knows as functions or constants (oo, re, im, li, ff, rf, id, E-like):
    // outside what answers need; refuse rather than guess.
    static const char* kSympyNames[] = {"oo", "re", "im", "li", "ff", "rf", "id", "zoo", "nan"};
    for (const char* known : kSympyNames)
      if (n == known) throw NotEvaluable{};
    return symbol(n);  // one letter or a name with '_' (the tokenizer split the rest)
  }

  Value symbol(const std::string& n) {
    auto it = symbols_.find(n);
    size_t index = it != symbols_.end() ? it->second : symbols_.size();
    if (it == symbols_.end()) symbols_[n] = index;
    if (index >= 64) throw NotEvaluable{};
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

  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
  int unary_depth_ = 0;
  std::map<std::string, size_t> symbols_;
};

bool finite(const Complex& c) { return std::isfinite(c.real()) && std::isfinite(c.imag()); }

}  // namespace

bool are_equal_under_sympy(std::string_view ground_truth_normalized,
                           std::string_view given_normalized) {
  std::string expr = "(" + std::string(ground_truth_normalized) + ")-(" +
                     std::string(given_normalized) + ")";
  if (!should_allow_eval(expr)) return false;
  try {
    Parser parser(tokenize(replace_all(expr, "^", "**")));
    Value diff = parser.parse();
    if (diff.exact) return diff.q == 0;
    if (!diff.symbolic) {
      // Only decimals and rationals: sympy's Float arithmetic, which is exact double arithmetic.
      return finite(diff.v[0]) && diff.v[0] == Complex(0, 0);
    }
    for (size_t k = 0; k < kPoints; ++k) {
      if (!finite(diff.v[k])) return false;
      double scale = 1.0;
      if (parser.top_sides) {
        scale = std::max({scale, std::abs(parser.top_sides->first.v[k]),
                          std::abs(parser.top_sides->second.v[k])});
      }
      if (std::abs(diff.v[k]) > 1e-9 * scale) return false;
    }
    return true;
  } catch (const NotEvaluable&) {
    return false;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace vime::rm
