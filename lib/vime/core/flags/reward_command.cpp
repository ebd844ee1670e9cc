// `vime reward`'s own flags; the reward model and its settings are `vime train`'s flags
// (--rm-type, --custom-rm-path, --reward-key, ...).
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
constexpr FlagSpec kFlags[] = {
    {.name = "--input",
     .kind = kString,
     .default_value = nullptr,
     .help = "IN.jsonl: lines with \"response\", \"label\", optional \"prompt\" and \"metadata\"",
     .required = true},
    {.name = "--output",
     .kind = kString,
     .default_value = nullptr,
     .help = "OUT.jsonl: every graded line with \"reward\" added",
     .required = true},
    {"--workers", kInt, nullptr, "grading threads, at least 1 (default: one per core)"},
};
}  // namespace
FlagGroup reward_command() { return {"reward_file", "vime reward", kFlags}; }
}  // namespace vime::core::flags
