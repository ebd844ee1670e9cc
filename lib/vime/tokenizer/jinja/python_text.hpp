// Text exactly as Python writes it: repr() of strings, and json.dumps() with the options
// transformers' tojson filter passes (ensure_ascii, indent, separators, sort_keys).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::tokenizer::jinja {

class Value;

// repr("it's") == "\"it's\"". Floats: python_float_repr.
std::string string_repr(std::string_view s);

struct JsonDumpOptions {
  bool ensure_ascii = false;  // transformers' default (json.dumps' own is true)
  // None, or the per-level indent text (an int n means n spaces).
  std::optional<std::string> indent;
  std::optional<std::string> item_separator;  // default ", " without indent, "," with
  std::optional<std::string> key_separator;   // default ": "
  bool sort_keys = false;
};
// Throws TemplateError(TypeError) for values JSON cannot hold (Undefined, callables), as json.dumps
// does.
std::string json_dumps(const Value& v, const JsonDumpOptions& options);

}  // namespace vime::tokenizer::jinja
