// Hooks: trainer-side customization plugins not tied to another group, and the YAML of extra
// settings that plugins read. slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--custom-megatron-init-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Runs once at the end of trainer initialization."},
    {"--custom-megatron-before-log-prob-hook-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Runs before each log-prob forward pass (actor, ref_ or "
     "teacher_)."},
    {"--custom-megatron-before-train-step-hook-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Runs before each optimizer step with the model and "
     "optimizer."},
    {"--custom-config-path", kString, nullptr,
     "YAML whose keys are set on the run's settings after parsing, overriding the command line; "
     "the way to pass parameters to plugins."},
};
}  // namespace
FlagGroup hooks() { return {"hooks", "Hooks", kFlags}; }
}  // namespace vime::core::flags
