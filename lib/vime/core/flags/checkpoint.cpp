// Checkpoint: where checkpoints are loaded from and saved to, what they hold, the reference
// model's checkpoint, HF export and the seed. slime: utils/arguments.py, tools/convert_*.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--load", kString, nullptr,
     "Checkpoint directory to resume from (or an HF directory); when it holds no checkpoint, "
     "training starts from --ref-load at rollout 0."},
    {"--save", kString, nullptr, "Directory checkpoints are written to."},
    {"--save-interval", kInt, nullptr,
     "Save every N rollouts, at each epoch end and at the last rollout; unset: never. Needs "
     "--save."},
    {"--async-save", kStoreTrue, nullptr,
     "Write checkpoints in the background (vime writes them synchronously: same files, same "
     "results).",
     kNoEffect},
    {"--no-save-optim", kStoreTrue, nullptr,
     "Leave optimizer state out of checkpoints (smaller; a resume restarts the optimizer)."},
    {"--no-save-rng", kStoreTrue, nullptr, "Leave RNG state out of checkpoints."},
    {"--no-load-optim", kStoreTrue, nullptr, "Do not restore optimizer state from --load."},
    {"--no-load-rng", kStoreTrue, nullptr, "Do not restore RNG state from --load."},
    {"--finetune", kStoreTrue, nullptr,
     "Load only the model weights from --load and start counting from 0 (set automatically when "
     "--load is not a training checkpoint)."},
    {"--ckpt-step", kInt, nullptr, "Iteration of --load to read (unset: the latest)."},
    {"--ckpt-format", kString, "torch_dist",
     "Megatron checkpoint format; vime always uses its own sharded-safetensors layout.", kNoEffect,
     "torch|torch_dist|zarr|torch_dcp|fsdp_dtensor"},
    {"--ref-load", kString, nullptr,
     "Reference-model checkpoint (needed for KL); also the starting weights when --load holds no "
     "checkpoint."},
    {"--ref-ckpt-step", kInt, nullptr, "Iteration of --ref-load to read (unset: the latest)."},
    {"--save-hf", kString, nullptr,
     "Also save HF-format weights at each save, to this path with {rollout_id} filled in."},
    {"--seed", kInt, "1234", "Seed for weight init and dropout; engine i is seeded with seed + i."},
    {"--calculate-per-token-loss", kStoreTrue, nullptr,
     "Average the loss over all tokens of a step instead of per sample."},
    {"--padded-vocab-size", kInt, nullptr,
     "Vocabulary size after padding (unset: derived from the tokenizer and parallel sizes)."},
};
}  // namespace
FlagGroup checkpoint() { return {"checkpoint", "Checkpoint", kFlags}; }
}  // namespace vime::core::flags
