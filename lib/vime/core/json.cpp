// vime::Json parsing and printing through RapidJSON (kept out of the public header).
#include "vime/json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "vime/core/json_depth.hpp"
#include "vime/core/json_number_guard.hpp"
#include "vime/error.hpp"

namespace vime {
namespace {

Json from_rapidjson(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return Json();
    case rapidjson::kFalseType:
      return Json(false);
    case rapidjson::kTrueType:
      return Json(true);
    case rapidjson::kNumberType:
      if (v.IsInt64()) return Json(v.GetInt64());
      return Json(v.GetDouble());
    case rapidjson::kStringType:
      return Json(std::string(v.GetString(), v.GetStringLength()));
    case rapidjson::kArrayType: {
      Json::Array out;
      out.reserve(v.Size());
      for (const auto& e : v.GetArray()) out.push_back(from_rapidjson(e));
      return Json(std::move(out));
    }
    case rapidjson::kObjectType: {
      Json::Object out;
      for (const auto& m : v.GetObject()) {
        out.insert_or_assign(std::string(m.name.GetString(), m.name.GetStringLength()),
                             from_rapidjson(m.value));
      }
      return Json(std::move(out));
    }
  }
  return Json();
}

template <class Writer>
void write(const Json& j, Writer& w) {
  switch (j.type()) {
    case Json::Type::kNull:
      w.Null();
      break;
    case Json::Type::kBool:
      w.Bool(j.as_bool());
      break;
    case Json::Type::kInt:
      w.Int64(j.as_int());
      break;
    case Json::Type::kDouble: {
      double d = j.as_double();
      if (std::isfinite(d)) {
        w.Double(d);
      } else {  // Python's json writes these; keep them readable rather than failing.
        const char* s = std::isnan(d) ? "NaN" : (d > 0 ? "Infinity" : "-Infinity");
        w.RawValue(s, std::char_traits<char>::length(s), rapidjson::kNumberType);
      }
      break;
    }
    case Json::Type::kString: {
      const auto& s = j.as_string();
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      break;
    }
    case Json::Type::kArray:
      w.StartArray();
      for (const auto& e : j.as_array()) write(e, w);
      w.EndArray();
      break;
    case Json::Type::kObject:
      w.StartObject();
      for (const auto& [k, v] : j.as_object()) {
        w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
        write(v, w);
      }
      w.EndObject();
      break;
  }
}

[[noreturn]] void type_error(const Json& j, const char* expected) {
  throw Error(std::string("expected a JSON ") + expected + ", found " + j.type_name() + ": " +
              j.dump().substr(0, 80));
}

}  // namespace

namespace core {

void check_json_depth(std::string_view text, std::string_view where) {
  constexpr int kMaxDepth = 1000;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        throw Error(std::string(where) + ": invalid JSON at offset " + std::to_string(i) +
                    ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string_view guard_json_numbers(std::string_view text, std::string_view where,
                                    std::string& storage) {
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  bool in_string = false;
  bool copied = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    for (std::string_view literal : {"NaN", "Infinity"}) {
      if (c != literal[0]) continue;
      // RapidJSON (kParseNanAndInfFlag) goes on into a fraction or exponent after these and
      // converts no digits: an assertion, or a read before its buffer without one.
      const size_t after = i + literal.size();
      if (text.substr(i, literal.size()) == literal && after < text.size() &&
          (text[after] == '.' || text[after] == 'e' || text[after] == 'E')) {
        throw Error(std::string(where) + ": invalid JSON at offset " + std::to_string(after) +
                    ": Invalid value.");
      }
    }
    if (c != '-' && !digit(i)) continue;
    // A number token: [-] digits [. digits] [(e|E) [+-] digits]. `lead` is the decimal exponent of
    // its first nonzero digit without the exponent part (none: the number is a zero).
    const size_t start = i;
    size_t j = i + (c == '-' ? 1 : 0);
    const size_t int_begin = j;
    while (digit(j)) ++j;
    const size_t int_end = j;
    bool valid = int_end > int_begin;
    std::optional<int64_t> lead;
    for (size_t k = int_begin; k < int_end && !lead; ++k)
      if (text[k] != '0') lead = static_cast<int64_t>(int_end - k) - 1;
    if (j < text.size() && text[j] == '.') {
      const size_t frac_begin = ++j;
      while (digit(j)) ++j;
      valid = valid && j > frac_begin;  // "0.e5" stays the error it is
      for (size_t k = frac_begin; k < j && !lead; ++k)
        if (text[k] != '0') lead = -static_cast<int64_t>(k - frac_begin) - 1;
    }
    int64_t exponent = 0;
    bool has_exponent = false;
    if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
      size_t k = j + 1;
      const bool negative = k < text.size() && text[k] == '-';
      if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
      if (digit(k)) {
        has_exponent = true;
        for (j = k; digit(j); ++j)
          exponent = std::min<int64_t>(exponent * 10 + (text[j] - '0'), 1 << 30);
        if (negative) exponent = -exponent;
      }
    }
    i = j - 1;
    if (!valid) continue;
    bool to_zero;
    if (!lead) {  // a zero: RapidJSON's fast path takes it only without an exponent or long
                  // fraction
      to_zero = has_exponent || j - int_end > 23;
    } else {
      const int64_t magnitude = *lead + exponent;
      if (magnitude > 308) {
        throw Error(std::string(where) + ": invalid JSON at offset " + std::to_string(start) +
                    ": Number too big to be stored in double.");
      }
      to_zero = magnitude < -325;  // under half the smallest denormal: Python reads 0.0
    }
    if (!to_zero) continue;
    if (!copied) {
      storage.assign(text);
      copied = true;
    }
    const std::string replacement = c == '-' ? "-0.0" : "0.0";
    const size_t length = j - start;  // >= 3: "0e5" is the shortest
    storage.replace(start, length, replacement + std::string(length - replacement.size(), ' '));
  }
  return copied ? std::string_view(storage) : text;
}

}  // namespace core

Json Json::parse(std::string_view given, std::string_view where) {
  core::check_json_depth(given, where);
  std::string storage;
  const std::string_view text = core::guard_json_numbers(given, where, storage);
  rapidjson::Document doc;
  constexpr unsigned kFlags = rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag;
  doc.Parse<kFlags>(text.data(), text.size());
  if (doc.HasParseError()) {
    throw Error(std::string(where) + ": invalid JSON at offset " +
                std::to_string(doc.GetErrorOffset()) + ": " +
                rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return from_rapidjson(doc);
}

const char* Json::type_name() const {
  static constexpr const char* kNames[] = {"null",   "bool",  "integer", "number",
                                           "string", "array", "object"};
  return kNames[value_.index()];
}

bool Json::as_bool() const {
  if (!is_bool()) type_error(*this, "bool");
  return std::get<bool>(value_);
}

int64_t Json::as_int() const {
  if (is_int()) return std::get<int64_t>(value_);
  if (type() == Type::kDouble) {
    double d = std::get<double>(value_);
    if (std::trunc(d) == d && std::abs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  type_error(*this, "integer");
}

double Json::as_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(value_));
  if (type() == Type::kDouble) return std::get<double>(value_);
  type_error(*this, "number");
}

const std::string& Json::as_string() const {
  if (!is_string()) type_error(*this, "string");
  return std::get<std::string>(value_);
}

const Json::Array& Json::as_array() const {
  if (!is_array()) type_error(*this, "array");
  return std::get<Array>(value_);
}

Json::Array& Json::as_array() {
  if (!is_array()) type_error(*this, "array");
  return std::get<Array>(value_);
}

const Json::Object& Json::as_object() const {
  if (!is_object()) type_error(*this, "object");
  return std::get<Object>(value_);
}

Json::Object& Json::as_object() {
  if (!is_object()) type_error(*this, "object");
  return std::get<Object>(value_);
}

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  const auto& obj = std::get<Object>(value_);
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &it->second;
}

const Json& Json::at(std::string_view key) const {
  const Json* found = find(key);
  if (found == nullptr) {
    if (!is_object()) type_error(*this, "object");
    throw Error("missing key \"" + std::string(key) + "\" in JSON object");
  }
  return *found;
}

Json& Json::operator[](std::string_view key) {
  if (is_null()) value_ = Object{};
  auto& obj = as_object();
  auto it = obj.find(key);
  if (it == obj.end()) it = obj.emplace(std::string(key), Json()).first;
  return it->second;
}

const Json& Json::at(size_t index) const {
  const auto& arr = as_array();
  if (index >= arr.size()) {
    throw Error("JSON array index " + std::to_string(index) + " out of range (size " +
                std::to_string(arr.size()) + ")");
  }
  return arr[index];
}

void Json::push_back(Json v) {
  if (is_null()) value_ = Array{};
  as_array().push_back(std::move(v));
}

size_t Json::size() const {
  if (is_array()) return std::get<Array>(value_).size();
  if (is_object()) return std::get<Object>(value_).size();
  return 0;
}

std::string Json::dump(int indent) const {
  rapidjson::StringBuffer buffer;
  if (indent > 0) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.SetIndent(' ', static_cast<unsigned>(indent));
    write(*this, w);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    write(*this, w);
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace vime
