#include "calc_expression.hpp"

#include <cctype>
#include <cstdint>
#include <stdexcept>

namespace calculator {
namespace {

struct CalcError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Recursive descent: expr = term {(+|-) term}; term = factor {* factor};
// factor = [-|+] factor | integer | ( expr ).
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  int64_t parse() {
    int64_t v = expr();
    skip_spaces();
    if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string& what) const {
    throw CalcError(what + " at position " + std::to_string(pos_));
  }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static int64_t add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw CalcError("integer overflow");
    return r;
  }
  static int64_t sub(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) throw CalcError("integer overflow");
    return r;
  }
  static int64_t mul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw CalcError("integer overflow");
    return r;
  }
  int64_t expr() {
    int64_t v = term();
    for (;;) {
      if (eat('+')) {
        v = add(v, term());
      } else if (eat('-')) {
        v = sub(v, term());
      } else {
        return v;
      }
    }
  }
  int64_t term() {
    int64_t v = factor();
    while (eat('*')) {
      v = mul(v, factor());
    }
    return v;
  }
  int64_t factor() {
    if (++depth_ > kMaxDepth) fail("nesting too deep");
    int64_t v = 0;
    if (eat('-')) {
      v = sub(0, factor());
    } else if (eat('+')) {
      v = factor();
    } else if (eat('(')) {
      v = expr();
      if (!eat(')')) fail("missing ')'");
    } else {
      skip_spaces();
      if (pos_ >= text_.size()) fail("expected a number");
      if (!std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        fail("unexpected '" + std::string(1, text_[pos_]) + "'");
      }
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        v = add(mul(v, 10), text_[pos_++] - '0');
      }
    }
    --depth_;
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string evaluate(std::string_view expression) {
  try {
    return std::to_string(Parser(expression).parse());
  } catch (const CalcError& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace calculator
