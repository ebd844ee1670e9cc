// --rollout-plugin X.so[:symbol]: one flag for either kind of rollout plugin, resolved from what
// the .so exports: a rollout function becomes --rollout-function-path, a generate function
// --custom-generate-function-path. A reward the same .so exports becomes --custom-rm-path when the
// run names no reward (neither --custom-rm-path nor --rm-type), so
// `vime train --rollout-plugin search_r1.so` runs Search-R1's generate and reward.
#pragma once

#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::plugin {

// Sets the resolved flags in `args` (source kDerived) and returns one line per flag set
// ("--custom-generate-function-path search_r1.so"). Throws vime::UsageError when the .so exports
// neither kind, exports both without a :symbol choosing, or the resolved flag is also given.
std::vector<std::string> resolve_rollout_plugin(Args& args);

}  // namespace vime::plugin
