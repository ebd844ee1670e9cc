#include "math/sympy_equal.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/py_text.hpp"
#include "math/sympy_normalize.hpp"
#include "math/sympy_tokens.hpp"
#include "math/sympy_value.hpp"

namespace vime::rm {
namespace {

using namespace sympy;

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
    if (n == "pi") return pi_value();
    if (n == "ln" || n == "log") return log_of(call_argument());
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
    return symbol_value(index);
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
  std::string expr;  // "(gt)-(given)", appended piecewise (GCC 12 warns falsely on "(" + string)
  expr.reserve(ground_truth_normalized.size() + given_normalized.size() + 5);
  expr.append("(")
      .append(ground_truth_normalized)
      .append(")-(")
      .append(given_normalized)
      .append(")");
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
