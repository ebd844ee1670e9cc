// Python's tokenizer as sympy's parse_expr sees a normalised answer, with sympy's split_symbols
// applied ("xy" -> x y, "x2" -> x 2) and Python's integer rule ("05" -> 0 5). Internal to the
// math engine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vime::rm::sympy {

struct NotEvaluable {};  // sympy would raise (or produce nan/zoo): the answers are not equal

enum class Tok { kNumber, kName, kOp, kEnd };
struct Token {
  Tok type;
  std::string text;
};

// Throws NotEvaluable on a character Python would reject ('=', '<', '[', quotes, ...).
std::vector<Token> tokenize(std::string_view s);

}  // namespace vime::rm::sympy
