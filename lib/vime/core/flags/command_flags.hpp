// The flags of the subcommands other than `vime train` and `vime eval` (which take every group of
// FlagRegistry::instance()): each command's own group, in <command>_command.cpp, on top of train's
// flags where the command takes those too (serve, reward, convert-hf from HF).
#pragma once

#include <vector>

#include "vime/core/flag_registry.hpp"
#include "vime/core/flag_spec.hpp"

namespace vime::core::flags {

FlagGroup serve_command();       // vllm serve's flags, MODEL_DIR, the ignored tuning flags
FlagGroup reward_command();      // --input, --output, --workers
FlagGroup logprobs_command();    // --hf-checkpoint | --load, --input, --output, ...
FlagGroup tokenize_command();    // MODE, --tokenizer, --input, --output, --add-special-tokens
FlagGroup convert_hf_from_hf();  // --hf-checkpoint, --save
FlagGroup convert_hf_to_hf();    // --input-dir, --output-dir, --origin-hf-dir, --vocab-size, -f
FlagGroup plugin_command();      // COMMAND, TARGET, --kind, --output
FlagGroup retrieve_command();    // COMMAND (serve), --corpus, --index, --port, BM25 parameters

const FlagRegistry& serve_flags();     // serve's group over train's
const FlagRegistry& reward_flags();    // reward's group over train's
const FlagRegistry& logprobs_flags();  // its group alone
const FlagRegistry& tokenize_flags();  // its group alone
const FlagRegistry& from_hf_flags();   // HF -> vime: its group over train's (the model flags)
const FlagRegistry& to_hf_flags();     // vime -> HF: its group alone
const FlagRegistry& convert_hf_help_flags();  // both directions' groups, for --help
const FlagRegistry& plugin_flags();           // its group alone
const FlagRegistry& retrieve_flags();         // its group alone

// Every registry above, for checks over every flag a command declares.
std::vector<const FlagRegistry*> command_registries();

}  // namespace vime::core::flags
