#include "vime/tokenizer/chat_request.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "vime/core/json_depth.hpp"
#include "vime/error.hpp"

namespace vime::tokenizer {
namespace {

std::string to_json(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

rapidjson::Document parse_object(std::string_view line, const std::string& where) {
  core::check_json_depth(line, where);
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError()) {
    throw Error(where + ": invalid JSON (" + rapidjson::GetParseError_En(doc.GetParseError()) +
                " at column " + std::to_string(doc.GetErrorOffset() + 1) + ")");
  }
  if (!doc.IsObject()) throw Error(where + ": expected a JSON object");
  return doc;
}

}  // namespace

ChatRequest parse_chat_request(std::string_view line, const std::string& where) {
  const rapidjson::Document doc = parse_object(line, where);
  ChatRequest request;
  if (!doc.HasMember("messages")) throw Error(where + ": missing \"messages\"");
  if (!doc["messages"].IsArray()) throw Error(where + ": \"messages\" must be a list");
  request.messages_json = to_json(doc["messages"]);
  if (doc.HasMember("tools") && !doc["tools"].IsNull()) {
    if (!doc["tools"].IsArray()) throw Error(where + ": \"tools\" must be a list or null");
    request.tools_json = to_json(doc["tools"]);
  }
  if (doc.HasMember("kwargs") && !doc["kwargs"].IsNull()) {
    if (!doc["kwargs"].IsObject()) throw Error(where + ": \"kwargs\" must be an object");
    request.kwargs_json = to_json(doc["kwargs"]);
  }
  if (doc.HasMember("add_generation_prompt")) {
    if (!doc["add_generation_prompt"].IsBool()) {
      throw Error(where + ": \"add_generation_prompt\" must be true or false");
    }
    request.add_generation_prompt = doc["add_generation_prompt"].GetBool();
  }
  return request;
}

std::string with_json_field(std::string_view line, std::string_view key,
                            std::string_view value_json) {
  rapidjson::Document doc = parse_object(line, "JSON line");
  const std::string quoted_key =
      to_json(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  if (doc.HasMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size())))) {
    // Replace the value in place: rebuild the object in its order.
    std::string out = "{";
    bool first = true;
    for (const auto& member : doc.GetObject()) {
      if (!first) out += ",";
      first = false;
      out += to_json(member.name) + ":";
      out += member.name.GetStringLength() == key.size() &&
                     std::string_view(member.name.GetString(), key.size()) == key
                 ? std::string(value_json)
                 : to_json(member.value);
    }
    return out + "}";
  }
  const size_t close = line.find_last_of('}');
  std::string out(line.substr(0, close));
  const bool empty = doc.ObjectEmpty();
  out += (empty ? "" : ",") + quoted_key + ":" + std::string(value_json) + "}";
  return out;
}

}  // namespace vime::tokenizer
