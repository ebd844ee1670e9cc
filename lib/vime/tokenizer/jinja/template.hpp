// A parsed Jinja2 template: parse once, render many times (concurrently: rendering never changes
// the parsed tree).
#pragma once

#include <string>
#include <string_view>

#include "vime/tokenizer/jinja/ast.hpp"
#include "vime/tokenizer/jinja/lexer.hpp"
#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

class Template {
 public:
  // Throws TemplateError with the line of the first syntax error.
  explicit Template(std::string_view source, const LexerOptions& options = {});
  // `context` holds the template's variables. Throws TemplateError with the failing line.
  std::string render(const Dict& context) const;

 private:
  Body body_;
};

}  // namespace vime::tokenizer::jinja
