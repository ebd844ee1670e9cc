#include "vime/core/config_dump.hpp"

#include <yaml-cpp/yaml.h>

#include "vime/core/arg_parser.hpp"
#include "vime/core/yaml_json.hpp"

namespace vime::core {
namespace {

void emit_list_section(YAML::Emitter& out, const char* key, const std::vector<std::string>& items,
                       const char* comment) {
  if (items.empty()) return;
  out << YAML::Key << key;
  if (*comment != '\0') out << YAML::Comment(comment);
  out << YAML::Value << YAML::BeginSeq;
  for (const auto& s : items) out << s;
  out << YAML::EndSeq;
}

void emit_passthrough(YAML::Emitter& out, const char* key,
                      const std::vector<PassthroughFlag>& flags, const char* comment) {
  if (flags.empty()) return;
  out << YAML::Key << key << YAML::Comment(comment) << YAML::Value << YAML::BeginMap;
  for (const auto& f : flags) {
    out << YAML::Key << f.name << YAML::Value;
    if (f.values.empty()) {
      out << YAML::Null;
    } else if (f.values.size() == 1) {
      out << YAML::DoubleQuoted << f.values[0];
    } else {
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& v : f.values) out << YAML::DoubleQuoted << v;
      out << YAML::EndSeq;
    }
  }
  out << YAML::EndMap;
}

}  // namespace

std::string resolved_config_yaml(const Args& args, const ConfigDumpExtras& extras,
                                 const FlagRegistry& registry) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::vector<std::string> flag_keys;
  for (const auto& group : registry.groups()) {
    if (group.name == "general") continue;
    out << YAML::Key << std::string(group.name) << YAML::Comment(std::string(group.title))
        << YAML::Value << YAML::BeginMap;
    for (const auto& spec : group.flags) {
      std::string dest = dest_of(spec);
      flag_keys.push_back(dest);
      out << YAML::Key << dest << YAML::Value;
      emit_yaml(out, args.get(dest));
      ArgSource source = args.source(dest);
      if (source != ArgSource::kDefault) out << YAML::Comment(arg_source_name(source));
    }
    out << YAML::EndMap;
  }
  // Keys that are no flag: custom config, and values validation derived without a flag of their
  // own.
  Json custom = Json::object();
  for (const auto& key : args.keys()) {
    if (registry.find_by_dest(key) == nullptr) custom[key] = args.get(key);
  }
  if (custom.size() > 0) {
    out << YAML::Key << "custom_config"
        << YAML::Comment("keys that are no flag (--custom-config-path, derived)") << YAML::Value;
    emit_yaml(out, custom);
  }
  emit_passthrough(out, "vllm_passthrough", args.vllm_passthrough(),
                   "passed verbatim to `vllm serve`");
  emit_passthrough(out, "router_passthrough", args.router_passthrough(),
                   "passed verbatim to vllm-router");
  emit_list_section(out, "no_effect", no_effect_settings(args, registry),
                    "accepted for compatibility; no effect in vime");
  emit_list_section(out, "plugins", extras.plugins, "checked: file, ABI and kind");
  emit_list_section(out, "warnings", extras.warnings, "");
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace vime::core
