// `vime logprobs (--hf-checkpoint DIR | --load CKPT) --input IN.jsonl --output OUT.jsonl`.
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--hf-checkpoint", kString, nullptr, "HF model directory to score with (or --load)"},
    {"--load", kString, nullptr,
     "vime checkpoint to score with: a save dir or an iter_NNNNNNN dir"},
    {"--ckpt-step", kInt, nullptr, "with --load: the iteration to load (default: the latest)"},
    {.name = "--input",
     .kind = kString,
     .default_value = nullptr,
     .help = "JSONL file of {\"tokens\": [...], \"response_length\": n, ...} lines",
     .required = true},
    {.name = "--output",
     .kind = kString,
     .default_value = nullptr,
     .help = "JSONL file to write: each input line plus \"log_probs\" and \"entropy\"",
     .required = true},
    {"--temperature", kFloat, "1.0", "temperature the log-probs are taken at (> 0)"},
    {"--dtype", kString, "float32", "parameter dtype (log-probs are computed in fp32)", kYes,
     "float32|bfloat16"},
    {"--device", kString, nullptr,
     "device to run on: cpu, cuda or cuda:N (default: cuda when available, else cpu)"},
    {"--max-tokens-per-batch", kInt, "8192",
     "tokens packed into one forward (a longer line still goes alone)"},
};
}  // namespace
FlagGroup logprobs_command() { return {"logprobs", "vime logprobs", kFlags}; }
}  // namespace vime::core::flags
