// --help text derived from the flag tables.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "vime/core/flag_registry.hpp"

namespace vime::core {

// Every group, or only the group named `only_group` ("rollout") when it is not empty.
std::string flags_help(std::string_view only_group = {},
                       const FlagRegistry& registry = FlagRegistry::instance());

// What `--help [GROUP]` (or -h) anywhere in `tokens` prints: `usage`, then the registry's flags
// (those of GROUP only, when given); nullopt when `tokens` do not ask for help. Throws UsageError
// listing the groups for a GROUP the registry does not have.
std::optional<std::string> help_if_asked(std::span<const std::string> tokens,
                                         std::string_view usage,
                                         const FlagRegistry& registry = FlagRegistry::instance());

}  // namespace vime::core
