// Builds the statement tree from tokens with Jinja2's grammar and precedence (parser.py): unknown
// tags, filters and tests are errors at parse time, as Jinja2 reports them when compiling.
#pragma once

#include <vector>

#include "vime/tokenizer/jinja/ast.hpp"
#include "vime/tokenizer/jinja/lexer.hpp"

namespace vime::tokenizer::jinja {

// Throws TemplateError (TemplateSyntaxError / TemplateAssertionError) carrying the line.
Body parse(const std::vector<Token>& tokens);

}  // namespace vime::tokenizer::jinja
