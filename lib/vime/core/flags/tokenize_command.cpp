// `vime tokenize MODE --tokenizer DIR --input IN.jsonl --output OUT.jsonl`.
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
constexpr FlagSpec kFlags[] = {
    {.name = "MODE",
     .kind = kString,
     .default_value = nullptr,
     .help = "encode (text -> ids), decode (ids -> text) or chat (messages -> rendered template)",
     .choices = "encode|decode|chat",
     .required = true},
    {.name = "--tokenizer",
     .kind = kString,
     .default_value = nullptr,
     .help = "HF tokenizer directory (tokenizer.json, tokenizer_config.json) or GPT-2's "
             "encoder.json + vocab.bpe",
     .required = true},
    {.name = "--input",
     .kind = kString,
     .default_value = nullptr,
     .help = "JSONL file to read, one object per line",
     .required = true},
    {.name = "--output",
     .kind = kString,
     .default_value = nullptr,
     .help = "JSONL file to write: each input line plus the result",
     .required = true},
    {"--add-special-tokens", kStoreTrue, nullptr,
     "encode only: add the tokenizer's special tokens (e.g. BOS) as transformers' "
     "add_special_tokens=True does"},
};
}  // namespace
FlagGroup tokenize_command() { return {"tokenize", "vime tokenize", kFlags}; }
}  // namespace vime::core::flags
