// Command line + YAML files -> vime::Args, with slime's precedence: defaults < --config file <
// --custom-config-path < command line. Unknown flags name the nearest known one; --vllm-* /
// --router-* flags that vime does not own are kept verbatim for the vLLM / vllm-router launch.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vime/args.hpp"
#include "vime/core/flag_registry.hpp"

namespace vime::core {

// Parses `tokens` (argv after the subcommand): flags, and bare tokens into the registry's
// positionals. Throws UsageError on any bad input, an unknown flag (naming the nearest known one)
// or a required flag left out. Does not validate cross-flag rules (see validate_args) and does not
// refuse unsupported flags (see check_supported).
Args parse_args(std::span<const std::string> tokens,
                const FlagRegistry& registry = FlagRegistry::instance());

// Every flag set to a non-default value whose support is kNotYet, as
// "--pipeline-model-parallel-size 2".
std::vector<std::string> unsupported_settings(
    const Args& args, const FlagRegistry& registry = FlagRegistry::instance());
// Every flag set to a non-default value whose support is kNoEffect, as "--attention-backend flash"
// (of the group named `only_group` alone when it is not empty).
std::vector<std::string> no_effect_settings(const Args& args,
                                            const FlagRegistry& registry = FlagRegistry::instance(),
                                            std::string_view only_group = {});
// Throws UsageError "--x 2 is not supported yet; --y is not supported yet" when any is set.
void check_supported(const Args& args, const FlagRegistry& registry = FlagRegistry::instance());

}  // namespace vime::core
