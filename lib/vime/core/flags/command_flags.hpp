// The flags of the subcommands other than `vime train` (which takes every group of
// FlagRegistry::instance()): each command's own group, in <command>_command.cpp, on top of the
// groups of train's flags that the command takes too (eval, serve, reward, convert-hf from HF).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "vime/args.hpp"
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

const FlagRegistry& eval_flags();      // train's model, rollout, data, eval, reward, ... groups
const FlagRegistry& serve_flags();     // serve's group over train's engine and model groups
const FlagRegistry& reward_flags();    // reward's group over train's reward group
const FlagRegistry& logprobs_flags();  // its group alone
const FlagRegistry& tokenize_flags();  // its group alone
const FlagRegistry& from_hf_flags();   // HF -> vime: its group over train's model group
const FlagRegistry& to_hf_flags();     // vime -> HF: its group alone
const FlagRegistry& convert_hf_help_flags();  // both directions' groups and the model's, for --help
const FlagRegistry& plugin_flags();           // its group alone
const FlagRegistry& retrieve_flags();         // its group alone

// parse_args over a command's `registry`, then `vime train`'s default for every dest the command
// does not declare: eval, serve, reward and convert-hf share code with `vime train` that reads
// them.
Args parse_with_train_defaults(std::span<const std::string> tokens, const FlagRegistry& registry);

// Every registry above, for checks over every flag a command declares.
std::vector<const FlagRegistry*> command_registries();

}  // namespace vime::core::flags
