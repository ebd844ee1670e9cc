// vLLM's "hermes" tool-call parser (--enable-auto-tool-choice --tool-call-parser hermes), the
// format of Qwen2.5, Qwen3 and Hermes chat templates: each call is a JSON object
// {"name": ..., "arguments": {...}} between <tool_call> and </tool_call> (the last one may be cut
// off by max_tokens). The content is the text before the first call (null when empty); a block that
// is not such JSON leaves the whole text as content and no calls, as vLLM does.
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime::serve {

struct ToolCallOutput {
  Json content = nullptr;  // the message's content: a string, or null
  Json tool_calls =
      Json::array();  // [{"id", "type": "function", "function": {"name", "arguments"}}]
  bool called() const { return tool_calls.size() > 0; }
};

// `id_prefix` + the call's index names each call ("chatcmpl-tool-<request>-0").
ToolCallOutput parse_hermes_tool_calls(const std::string& text, const std::string& id_prefix);

}  // namespace vime::serve
