// The subcommands of `vime`. Each takes the arguments after its name and returns the exit code;
// errors are thrown as vime::Error / vime::UsageError and printed by main().
#pragma once

#include <string>
#include <vector>

namespace vime::app {

using Arguments = std::vector<std::string>;

// `--help [GROUP]` anywhere in argv: prints `usage` and the flags (of one group), returns true.
bool print_flags_help_if_asked(const Arguments& argv, const char* usage);

int run_train(const Arguments& args);
int run_eval(const Arguments& args);
int run_plugin(const Arguments& args);
int run_tokenize(const Arguments& args);
int run_reward(const Arguments& args);
int run_convert_hf(const Arguments& args);
int run_logprobs(const Arguments& args);
int run_serve(const Arguments& args);

}  // namespace vime::app
