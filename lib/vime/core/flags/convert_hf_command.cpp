// `vime convert-hf`: HF -> vime (--hf-checkpoint DIR --save OUT, with `vime train`'s model flags)
// and vime -> HF (--input-dir CKPT --output-dir OUT --origin-hf-dir DIR).
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
constexpr FlagSpec kFromHf[] = {
    {.name = "--hf-checkpoint",
     .kind = kString,
     .default_value = nullptr,
     .help = "HF model directory (config.json + *.safetensors) to convert",
     .required = true},
    {.name = "--save",
     .kind = kString,
     .default_value = nullptr,
     .help = "the vime checkpoint dir to write (OUT/iter_0000000 and the tracker file)",
     .required = true},
    {"--padded-vocab-size", kInt, nullptr,
     "vocabulary rows after padding (unset: vocab_size up to a multiple of "
     "--make-vocab-size-divisible-by)"},
};
constexpr FlagSpec kToHf[] = {
    {.name = "--input-dir",
     .kind = kString,
     .default_value = nullptr,
     .help = "vime checkpoint: an iter_NNNNNNN dir or a save dir (its latest iteration)",
     .required = true},
    {.name = "--output-dir",
     .kind = kString,
     .default_value = nullptr,
     .help = "HF directory to write",
     .required = true},
    {.name = "--origin-hf-dir",
     .kind = kString,
     .default_value = nullptr,
     .help = "the HF directory the model came from: its config.json and tokenizer files are "
             "copied",
     .required = true},
    {"--vocab-size", kInt, nullptr,
     "cut the padded vocabulary to this many rows (default: the config's vocab_size)"},
    {"--force",
     kStoreTrue,
     nullptr,
     "overwrite a non-empty --output-dir",
     Support::kYes,
     {},
     {},
     "-f"},
    {"--merge-lora", kStoreTrue, nullptr,
     "a checkpoint trained with LoRA: write the merged model (W + alpha/r * B A); without it, "
     "the adapter alone in PEFT's files"},
    {"--model-name", kString, nullptr,
     "slime's model family name: not supported, pass --origin-hf-dir", Support::kNotYet},
};
}  // namespace
FlagGroup convert_hf_from_hf() { return {"from_hf", "HF -> vime", kFromHf}; }
FlagGroup convert_hf_to_hf() { return {"to_hf", "vime -> HF", kToHf}; }
}  // namespace vime::core::flags
