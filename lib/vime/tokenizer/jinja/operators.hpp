// Python's arithmetic and containment on template values: + - * / // % ** ~ and `in`, with the
// TypeError texts Python gives. Undefined operands raise UndefinedError, as Jinja2's Undefined
// does.
#pragma once

#include <string_view>

#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

Value binary_operation(std::string_view op, const Value& a, const Value& b);
Value negate(const Value& v, bool minus);
bool contains(const Value& container, const Value& item);
// printf-style "fmt % args" (%s %r %d %i %f %x %%), as Python's str.__mod__ and Jinja2's |format.
std::string percent_format(const std::string& format, const List& args);
// Raises the UndefinedError an Undefined value carries.
[[noreturn]] void fail_undefined(const Value& undefined);

}  // namespace vime::tokenizer::jinja
