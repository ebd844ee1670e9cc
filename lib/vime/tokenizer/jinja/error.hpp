// Errors of the interpreter. Helpers that do not know where they are throw with line 0; the
// interpreter fills in the line of the expression or statement it was running.
#pragma once

#include <string>

#include "vime/error.hpp"

namespace vime::tokenizer::jinja {

class TemplateError : public Error {
 public:
  // `kind` is the Python exception Jinja2 raises ("TemplateSyntaxError", "UndefinedError",
  // "TypeError", "TemplateError" for raise_exception, ...).
  TemplateError(std::string kind, std::string message, int line = 0)
      : Error(format(kind, message, line)),
        kind_(std::move(kind)),
        message_(std::move(message)),
        line_(line) {}

  const std::string& kind() const { return kind_; }
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  TemplateError at_line(int line) const { return TemplateError(kind_, message_, line); }

 private:
  static std::string format(const std::string& kind, const std::string& message, int line) {
    std::string out = line > 0 ? "line " + std::to_string(line) + ": " : std::string();
    return out + kind + ": " + message;
  }
  std::string kind_;
  std::string message_;
  int line_;
};

inline TemplateError type_error(std::string message) {
  return TemplateError("TypeError", std::move(message));
}
inline TemplateError undefined_error(std::string message) {
  return TemplateError("UndefinedError", std::move(message));
}

}  // namespace vime::tokenizer::jinja
