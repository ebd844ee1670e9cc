// The up-front check of every plugin a run names (`vime train`, `vime eval`), so a wrong file fails
// in the first second, not after a rollout. It lives above rollout/ because rollout's built-ins
// (filter_hub names, the SFT rollout) are accepted here by name, without a .so.
#pragma once

#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::loop {

// Loads every plugin the args name (plugin::hook_flags()) and checks its kind and ABI; returns one
// line per plugin, "--custom-rm-path: /p/libx.so:my_reward (reward)". Throws the loader's
// UsageError on the first failure.
std::vector<std::string> check_hook_plugins(const Args& args);

}  // namespace vime::loop
