// Text exactly as Python writes it: repr() of floats and strings, and json.dumps() with the options
// transformers' tojson filter passes (ensure_ascii, indent, separators, sort_keys).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::tokenizer::jinja {

class Value;

std::string float_repr(double v);             // repr(1.0) == "1.0", repr(1e16) == "1e+16"
std::string string_repr(std::string_view s);  // repr("it's") == "\"it's\""

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
