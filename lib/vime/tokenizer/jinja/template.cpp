#include "vime/tokenizer/jinja/template.hpp"

#include "vime/tokenizer/jinja/interpreter.hpp"
#include "vime/tokenizer/jinja/parser.hpp"

namespace vime::tokenizer::jinja {

Template::Template(std::string_view source, const LexerOptions& options)
    : body_(parse(tokenize(source, options))) {}

std::string Template::render(const Dict& context) const {
  return Interpreter(context).render(body_);
}

}  // namespace vime::tokenizer::jinja
