#include "vime/serve/tool_calls.hpp"

#include <vector>

#include "vime/error.hpp"

namespace vime::serve {
namespace {

constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

// One block's {"name", "arguments"} as an OpenAI tool call; false when it is not that.
bool to_call(const std::string& block, const std::string& id, Json* call) {
  Json parsed;
  try {
    parsed = Json::parse(block, "tool call");
  } catch (const Error&) {
    return false;
  }
  const Json* name = parsed.is_object() ? parsed.find("name") : nullptr;
  if (name == nullptr || !name->is_string()) return false;
  const Json* arguments = parsed.find("arguments");
  std::string args_text = "{}";
  if (arguments != nullptr && !arguments->is_null()) {
    args_text = arguments->is_string() ? arguments->as_string() : arguments->dump();
  }
  *call = Json::Object{
      {"id", id},
      {"type", "function"},
      {"function", Json::Object{{"name", name->as_string()}, {"arguments", args_text}}}};
  return true;
}

}  // namespace

ToolCallOutput parse_hermes_tool_calls(const std::string& text, const std::string& id_prefix) {
  ToolCallOutput out;
  const size_t first = text.find(kOpen);
  if (first == std::string::npos) {
    if (!text.empty()) out.content = text;
    return out;
  }
  std::vector<Json> calls;
  for (size_t at = first; at != std::string::npos; at = text.find(kOpen, at)) {
    const size_t body = at + kOpen.size();
    const size_t close = text.find(kClose, body);
    const std::string block = trim(std::string_view(text).substr(
        body, close == std::string::npos ? std::string::npos : close - body));
    Json call;
    if (!to_call(block, id_prefix + std::to_string(calls.size()), &call)) {
      out.content = text;  // not a tool call after all: the model's text stands
      return out;
    }
    calls.push_back(std::move(call));
    if (close == std::string::npos) break;
    at = close + kClose.size();
  }
  if (first > 0) out.content = text.substr(0, first);
  for (auto& c : calls) out.tool_calls.push_back(std::move(c));
  return out;
}

}  // namespace vime::serve
