// Fault tolerance: health checks of the rollout engines and recovery of failed ones.
// slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--use-fault-tolerance", kStoreTrue, nullptr,
     "Health-check the rollout engines during generate and eval and restart engines that fail."},
    {"--rollout-health-check-interval", kFloat, "30.0", "Seconds between engine health checks."},
    {"--rollout-health-check-timeout", kFloat, "30.0",
     "Seconds to wait for a health-check answer before the engine counts as failed."},
    {"--rollout-health-check-first-wait", kFloat, "0",
     "Seconds to wait after engine start before the first health check (raise it for slow "
     "compilation)."},
    {"--rollout-session-id", kString, nullptr,
     "Identity slime gives its retained serving session across restarts.", kNoEffect},
    {"--rollout-cleanup-timeout", kFloat, "60.0",
     "Seconds slime allows for detaching or disposing a failed training attempt.", kNoEffect},
};
}  // namespace
FlagGroup fault_tolerance() { return {"fault_tolerance", "Fault tolerance", kFlags}; }
}  // namespace vime::core::flags
