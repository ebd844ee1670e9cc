#include "vime/core/yaml_json.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "vime/error.hpp"

namespace vime::core {
namespace {

Json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return Json(s);  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Json();
  if (s == "true" || s == "True" || s == "TRUE") return Json(true);
  if (s == "false" || s == "False" || s == "FALSE") return Json(false);
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(
      R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  if (std::regex_match(s, kInt)) {
    try {
      return Json(static_cast<int64_t>(std::stoll(s)));
    } catch (const std::out_of_range&) {
      return Json(std::stod(s));
    }
  }
  if (std::regex_match(s, kFloat)) {
    if (s.find("inf") != std::string::npos || s.find("Inf") != std::string::npos ||
        s.find("INF") != std::string::npos) {
      return Json(s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    }
    if (s.find("nan") != std::string::npos || s.find("NaN") != std::string::npos ||
        s.find("NAN") != std::string::npos) {
      return Json(std::nan(""));
    }
    return Json(std::stod(s));
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
