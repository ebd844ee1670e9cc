#include "vime/tokenizer/jinja/json_value.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "vime/core/json_depth.hpp"
#include "vime/core/json_number_guard.hpp"
#include "vime/error.hpp"

namespace vime::tokenizer::jinja {
namespace {

Value from_rapidjson(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return Value::none();
    case rapidjson::kFalseType:
      return Value(false);
    case rapidjson::kTrueType:
      return Value(true);
    case rapidjson::kNumberType:
      if (v.IsInt64()) return Value(static_cast<int64_t>(v.GetInt64()));
      if (v.IsUint64()) return Value(static_cast<double>(v.GetUint64()));
      return Value(v.GetDouble());
    case rapidjson::kStringType:
      return Value(std::string(v.GetString(), v.GetStringLength()));
    case rapidjson::kArrayType: {
      List items;
      items.reserve(v.Size());
      for (const auto& e : v.GetArray()) items.push_back(from_rapidjson(e));
      return Value::list(std::move(items));
    }
    case rapidjson::kObjectType: {
      Dict d;
      for (const auto& m : v.GetObject()) {
        d.set(Value(std::string(m.name.GetString(), m.name.GetStringLength())),
              from_rapidjson(m.value));
      }
      return Value::dict(std::move(d));
    }
  }
  return Value::none();
}

}  // namespace

Value value_from_json_text(std::string_view given, std::string_view where) {
  core::check_json_depth(given, where);
  std::string storage;
  const std::string_view text = core::guard_json_numbers(given, where, storage);
  rapidjson::Document doc;
  // Invalid UTF-8 is an error here, as it is to Python reading the file.
  doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseValidateEncodingFlag>(
      text.data(), text.size());
  if (doc.HasParseError()) {
    throw Error(std::string(where) + ": invalid JSON at offset " +
                std::to_string(doc.GetErrorOffset()) + ": " +
                rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return from_rapidjson(doc);
}

Value value_from_json(const Json& json) {
  switch (json.type()) {
    case Json::Type::kNull:
      return Value::none();
    case Json::Type::kBool:
      return Value(json.as_bool());
    case Json::Type::kInt:
      return Value(json.as_int());
    case Json::Type::kDouble:
      return Value(json.as_double());
    case Json::Type::kString:
      return Value(json.as_string());
    case Json::Type::kArray: {
      List items;
      for (const Json& e : json.as_array()) items.push_back(value_from_json(e));
      return Value::list(std::move(items));
    }
    case Json::Type::kObject: {
      Dict d;
      for (const auto& [k, v] : json.as_object())
        d.items.emplace_back(Value(k), value_from_json(v));
      return Value::dict(std::move(d));
    }
  }
  return Value::none();
}

}  // namespace vime::tokenizer::jinja
