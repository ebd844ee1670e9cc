// General: flags of `vime train` itself rather than of the run it configures.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--config", kString, nullptr,
     "YAML file of flag settings (keys are flag names or dests, optionally under the group "
     "sections "
     "that --dry-run prints); the command line wins over it."},
    {"--dry-run", kStoreTrue, nullptr,
     "Parse and validate everything, print the resolved configuration as YAML, and exit."},
};
}  // namespace
FlagGroup general() { return {"general", "General", kFlags}; }
}  // namespace vime::core::flags
