// The resolved configuration as YAML (what `vime train --dry-run` prints). Grouped like --help; the
// output is itself a valid --config file.
#pragma once

#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/core/flag_registry.hpp"

namespace vime::core {

struct ConfigDumpExtras {
  std::vector<std::string> plugins;  // "--custom-rm-path: /p/lib.so:fn (reward)"
  std::vector<std::string> warnings;
};

std::string resolved_config_yaml(const Args& args, const ConfigDumpExtras& extras = {},
                                 const FlagRegistry& registry = FlagRegistry::instance());

}  // namespace vime::core
