// The reward flags, read once. Every field tolerates Args without the flag (a subcommand's or a
// test's args): it then counts as unset.
#pragma once

#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::reward {

struct RewardOptions {
  std::string rm_type;                        // --rm-type, trimmed; empty when unset
  std::optional<std::string> custom_rm_path;  // --custom-rm-path
  bool group_rm = false;                      // --group-rm
  std::optional<std::string> reward_key;      // --reward-key

  static RewardOptions from(const Args& args);
};

}  // namespace vime::reward
