// Reading the arguments of a builtin as Python binds them: by position, else by keyword, else a
// default. Index 0 of a filter or test is the value it applies to.
#pragma once

#include <string>
#include <string_view>

#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

inline Value arg(const CallArgs& args, size_t index, std::string_view name,
                 Value fallback = Value()) {
  if (index < args.positional.size()) return args.positional[index];
  if (const Value* v = args.keyword_arg(name)) return *v;
  return fallback;
}

inline bool has_arg(const CallArgs& args, size_t index, std::string_view name) {
  return index < args.positional.size() || args.keyword_arg(name) != nullptr;
}

// Python's str(x) as Jinja2's soft_str: Undefined becomes "".
inline std::string soft_str(const Value& v) { return v.str(); }

inline const std::string& expect_string(const Value& v, std::string_view what) {
  if (!v.is_string()) throw type_error(std::string(what) + " must be str, not " + v.type_name());
  return v.as_string();
}

}  // namespace vime::tokenizer::jinja
