// Splits a template into tokens the way Jinja2's lexer does with transformers' settings:
// trim_blocks (drop the newline after a block or comment tag), lstrip_blocks (drop the spaces
// before one on its line), "-"/"+" whitespace control, raw blocks, newlines normalised and one
// trailing newline dropped (keep_trailing_newline=False).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vime::tokenizer::jinja {

struct Token {
  enum class Type {
    kData,
    kVariableBegin,
    kVariableEnd,
    kBlockBegin,
    kBlockEnd,
    kName,
    kString,
    kInteger,
    kFloat,
    kOperator,
    kEnd
  };
  Type type;
  std::string text;  // data, name, operator, or the decoded string literal
  int64_t integer = 0;
  double floating = 0;
  int line = 1;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws TemplateError (TemplateSyntaxError) with the line for unterminated tags and bad tokens.
std::vector<Token> tokenize(std::string_view source, const LexerOptions& options = {});

}  // namespace vime::tokenizer::jinja
