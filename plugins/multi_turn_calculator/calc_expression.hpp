// The calculator tool: integer expressions with + - * and parentheses ("12*(3+4)", "-5+2").
#pragma once

#include <string>
#include <string_view>

namespace calculator {

// The value as decimal text, or "error: ..." (the model sees the error as the tool result).
std::string evaluate(std::string_view expression);

}  // namespace calculator
