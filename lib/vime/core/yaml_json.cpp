#include "vime/core/yaml_json.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "vime/error.hpp"

namespace vime::core {
namespace {

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// YAML 1.1's int ([-+]?[0-9]+) and float forms, checked by hand: std::regex recurses once per
// character and overflows the stack on a long scalar.
bool is_yaml_int(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return is_digits(s);
}

bool is_yaml_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s == ".inf" || s == ".Inf" || s == ".INF") return true;
  const size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!is_digits(exponent)) return false;
  }
  const size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return is_digits(mantissa);
  const std::string_view whole = mantissa.substr(0, dot), fraction = mantissa.substr(dot + 1);
  if (whole.empty()) return is_digits(fraction);
  return is_digits(whole) && (fraction.empty() || is_digits(fraction));
}

bool is_yaml_nan(std::string_view s) { return s == ".nan" || s == ".NaN" || s == ".NAN"; }

Json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return Json(s);  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Json();
  if (s == "true" || s == "True" || s == "TRUE") return Json(true);
  if (s == "false" || s == "False" || s == "FALSE") return Json(false);
  if (is_yaml_int(s)) {
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno != ERANGE) return Json(static_cast<int64_t>(v));
    return Json(std::strtod(s.c_str(), nullptr));  // past int64: a float, as before
  }
  if (is_yaml_nan(s)) return Json(std::nan(""));
  if (is_yaml_float(s)) {
    if (s.find_first_of("iI") != std::string::npos) return Json(s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    return Json(std::strtod(s.c_str(), nullptr));  // 1e999: inf, as Python's float() gives
  }
  return Json(s);
}

Json node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Json();
    case YAML::NodeType::Scalar:
      return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& e : node) out.push_back(node_to_json(e));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = node_to_json(kv.second);
      return out;
    }
  }
  return Json();
}

}  // namespace

Json parse_yaml(std::string_view text, std::string_view where) {
  try {
    return node_to_json(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    throw UsageError(std::string(where) + ": invalid YAML at line " +
                     std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Json load_yaml_file(const std::filesystem::path& path, std::string_view flag) {
  std::string where = std::string(flag) + " " + path.string();
  std::ifstream in(path);
  if (!in) throw UsageError(where + ": cannot read the file (does it exist?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_yaml(buffer.str(), where);
}

void emit_yaml(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::Type::kNull:
      out << YAML::Null;
      break;
    case Json::Type::kBool:
      out << value.as_bool();
      break;
    case Json::Type::kInt:
      out << value.as_int();
      break;
    case Json::Type::kDouble: {
      // Shortest round-trip text ("1e-06", "0.2"), which YAML reads back as the same float.
      std::string text = Json(value.as_double()).dump();
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
      out << text;
      break;
    }
    case Json::Type::kString: {
      const std::string& s = value.as_string();
      // Quote strings a YAML reader would take for another type ("1", "true", "null", "").
      Json reread = scalar_to_json(YAML::Node(s));
      if (!reread.is_string()) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      break;
    }
    case Json::Type::kArray: {
      bool flat = true;
      for (const auto& e : value.as_array()) flat = flat && !e.is_array() && !e.is_object();
      if (flat) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& e : value.as_array()) emit_yaml(out, e);
      out << YAML::EndSeq;
      break;
    }
    case Json::Type::kObject:
      out << YAML::BeginMap;
      for (const auto& [k, v] : value.as_object()) {
        out << YAML::Key << k << YAML::Value;
        emit_yaml(out, v);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace vime::core
