// Template values from JSON. From text, objects keep their key order (Python's json.loads does,
// and `tojson` prints keys in that order); from vime::Json they come out sorted, as it stores them.
#pragma once

#include <string_view>

#include "vime/json.hpp"
#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {

// Throws vime::Error naming `where` when the text is not JSON.
Value value_from_json_text(std::string_view text, std::string_view where);
Value value_from_json(const Json& json);

}  // namespace vime::tokenizer::jinja
