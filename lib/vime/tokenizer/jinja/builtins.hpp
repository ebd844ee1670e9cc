// The filters, tests and globals of transformers' Jinja environment, looked up by name.
#pragma once

#include <string_view>

#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

// A filter gets the filtered value first in args.positional.
using Builtin = Value (*)(Interpreter&, CallArgs&);

Builtin find_filter(std::string_view name);  // nullptr when there is none
Builtin find_rare_filter(
    std::string_view name);  // groupby, slice, striptags, ... (filters_rare.cpp)
// A test returns its answer; args.positional[0] is the tested value.
using TestFn = bool (*)(Interpreter&, CallArgs&);
TestFn find_test(std::string_view name);
// range, namespace, dict, cycler, joiner, lipsum, raise_exception, strftime_now; Undefined if none.
Value find_global(std::string_view name);
// A method of a str, dict or list value bound to it (Python's getattr); a mutating one is an
// Undefined that raises SecurityError when used; no method at all is an Undefined without hint.
Value find_method(const Value& self, std::string_view name);
inline bool is_no_method(const Value& v) { return v.is_undefined() && v.undefined_hint().empty(); }

}  // namespace vime::tokenizer::jinja
