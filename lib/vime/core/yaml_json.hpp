// YAML files as vime::Json values (for --config, --custom-config-path, --eval-config, ...).
#pragma once

#include <filesystem>
#include <string_view>

#include "vime/json.hpp"

namespace YAML {
class Emitter;
}

namespace vime::core {

// Reads a YAML file into a Json value. Plain scalars resolve like YAML 1.2's core schema (null,
// bool, int, float, else string); quoted scalars stay strings. Throws UsageError naming `flag` and
// the file, with the line of a syntax error.
Json load_yaml_file(const std::filesystem::path& path, std::string_view flag);
Json parse_yaml(std::string_view text, std::string_view where);
// Writes `value` into an emitter (flow style for short scalar lists).
void emit_yaml(YAML::Emitter& out, const Json& value);

}  // namespace vime::core
