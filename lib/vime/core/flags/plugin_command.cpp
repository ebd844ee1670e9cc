// `vime plugin inspect LIB.so` | `vime plugin new --kind KIND NAME [--output DIR]`.
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
constexpr FlagSpec kFlags[] = {
    {.name = "COMMAND",
     .kind = kString,
     .default_value = nullptr,
     .help = "inspect (what a plugin exports) or new (a CMake project for a new plugin)",
     .choices = "inspect|new",
     .required = true},
    {.name = "TARGET",
     .kind = kString,
     .default_value = nullptr,
     .help = "inspect: the plugin file LIB.so; new: the new plugin's NAME",
     .required = true},
    {"--kind", kString, nullptr, "new: the plugin kind KIND (required with new)"},
    {"--output", kString, nullptr, "new: the project directory DIR (default: ./NAME)"},
};
}  // namespace
FlagGroup plugin_command() { return {"plugin", "vime plugin", kFlags}; }
}  // namespace vime::core::flags
