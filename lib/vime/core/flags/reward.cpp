// Reward: the built-in reward models, reward plugins and what is done with their results.
// slime: slime/utils/arguments.py, slime/rollout/rm_hub/.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--rm-type", kString, nullptr,
     "Built-in reward: math, deepscaler, dapo, f1, gpqa, ifbench, random or remote_rm, optionally "
     "prefixed boxed_; a sample's metadata rm_type wins."},
    {"--reward-key", kString, nullptr,
     "Key of the reward value when the reward returns a dict (e.g. score for dapo)."},
    {"--group-rm", kStoreTrue, nullptr,
     "Compute rewards for a whole group at once, after all its samples finish."},
    {"--rm-url", kString, nullptr,
     "URL of the reward service for --rm-type remote_rm, e.g. http://localhost:8000."},
    {"--custom-rm-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Computes a sample's (or, with --group-rm, a group's) "
     "reward in place of --rm-type.",
     kYes,
     {},
     {},
     "--rm-plugin"},
    {"--custom-reward-post-process-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Turns raw rewards into training rewards in place of group "
     "normalization."},
    {"--custom-convert-samples-to-train-data-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Converts finished samples into the trainer's batch "
     "(tokens, masks, rewards, ...)."},
};
}  // namespace
FlagGroup reward() { return {"reward", "Reward", kFlags}; }
}  // namespace vime::core::flags
