// --help text derived from the flag tables.
#pragma once

#include <string>
#include <string_view>

#include "vime/core/flag_registry.hpp"

namespace vime::core {

// Every group, or only the group named `only_group` ("rollout") when it is not empty.
std::string flags_help(std::string_view only_group = {},
                       const FlagRegistry& registry = FlagRegistry::instance());

}  // namespace vime::core
