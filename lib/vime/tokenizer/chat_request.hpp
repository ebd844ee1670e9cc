// One line of `vime tokenize chat` input, with messages, tools and kwargs kept as JSON text in
// their original key order (tojson in a chat template prints keys in that order, as transformers
// does).
#pragma once

#include <string>
#include <string_view>

namespace vime::tokenizer {

struct ChatRequest {
  std::string messages_json;        // a JSON list
  std::string tools_json = "null";  // a JSON list, or null
  std::string kwargs_json = "{}";   // a JSON object of extra template variables
  bool add_generation_prompt = false;
};

// {"messages": [...], "tools": [...] or null, "add_generation_prompt": bool, "kwargs": {...}}; only
// "messages" is required. Throws vime::Error naming `where` (file:line) and the bad field.
ChatRequest parse_chat_request(std::string_view line, const std::string& where);

// `line` (a JSON object) with `key` set to `value_json`, keeping the line's own text and key order.
std::string with_json_field(std::string_view line, std::string_view key,
                            std::string_view value_json);

}  // namespace vime::tokenizer
