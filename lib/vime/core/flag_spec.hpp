// One row per command-line flag: the single declaration every other piece (parser, --help, YAML
// config, dry-run output, validation) is derived from. Tables live in
// lib/vime/core/flags/<group>.cpp; the other subcommands' in lib/vime/core/flags/<command>.cpp.
#pragma once

#include <span>
#include <string_view>

namespace vime::core {

enum class FlagKind : unsigned char {
  kStoreTrue,     // `--flag` sets true; default false (argparse store_true)
  kStoreFalse,    // `--flag` sets false; default true (argparse store_false, e.g.
                  // --disable-bias-linear with dest add_bias_linear)
  kBoolOptional,  // `--flag` true, `--no-flag` false, default none (argparse BooleanOptionalAction)
  kInt,
  kFloat,
  kString,
  kJson,          // a JSON text, checked at parse time (e.g. --train-env-vars '{"A": "1"}')
  kIntList,       // nargs='+' of ints
  kFloatList,     // nargs='+' of floats
  kStringList,    // nargs='+' (or '*') of strings
  kStringAppend,  // action='append': every use adds one string
};

// What vime does with a flag.
enum class Support : unsigned char {
  kYes,       // implemented (or owned by a vime component on the roadmap) and honoured
  kNoEffect,  // accepted for compatibility with slime/Megatron scripts; vime has nothing it would
              // change
  kNotYet,    // would change results or resources and is not implemented: refused when set to
              // anything but its default ("--pipeline-model-parallel-size 2 is not supported yet")
};

struct FlagSpec {
  // "--rollout-temperature"; "-O" for a one-dash spelling. A name without a leading '-' ("MODE")
  // is positional, as argparse's add_argument("mode"): bare tokens fill positionals in table order.
  std::string_view name;
  FlagKind kind;
  const char* default_value;  // nullptr = None; otherwise as typed on a command line: "1.0",
                              // "grpo", "a b" for lists; kStoreTrue/kStoreFalse ignore it
  std::string_view help;
  Support support = Support::kYes;
  std::string_view choices = {};  // "grpo|gspo|cispo": the accepted values, '|'-separated
  std::string_view dest = {};     // key in Args; empty: name without leading '-', lower case,
                                  // '-' -> '_' ("--max-model-len" -> max_model_len)
  std::string_view aliases = {};  // other spellings, '|'-separated: "--rollout-plugin"
  bool required = false;  // argparse's required=True: parsing fails naming it when it is not given
};

struct FlagGroup {
  std::string_view name;   // "rollout": the YAML section of the dry-run output
  std::string_view title;  // "Rollout": the --help heading
  std::span<const FlagSpec> flags;
};

}  // namespace vime::core
