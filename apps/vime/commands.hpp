// The subcommands of `vime`. Each takes the arguments after its name and returns the exit code;
// errors are thrown as vime::Error / vime::UsageError and printed by main(). Each declares its
// flags in a table (lib/vime/core/flags), parses them with core::parse_args and reads them into
// its own options struct once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vime/core/flag_registry.hpp"

namespace vime::app {

using Arguments = std::vector<std::string>;

// `--help [GROUP]` anywhere in argv: prints `usage` and the registry's flags (of one group) and
// returns 0. No arguments at all to a command that needs a positional (`vime tokenize`): prints
// `usage` and returns 2. Otherwise nullopt: parse argv.
std::optional<int> help_exit_code(const Arguments& argv, const char* usage,
                                  const core::FlagRegistry& registry);

int run_train(const Arguments& args);
int run_eval(const Arguments& args);
int run_plugin(const Arguments& args);
int run_tokenize(const Arguments& args);
int run_reward(const Arguments& args);
int run_convert_hf(const Arguments& args);
int run_logprobs(const Arguments& args);
int run_serve(const Arguments& args);
int run_retrieve(const Arguments& args);

}  // namespace vime::app
