// Training backend: how the trainer builds, freezes and runs the model (log-prob chunks, critic
// config, MTP). slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--train-backend", kString, "megatron",
     "Training backend; vime's native trainer stands in for Megatron.", kNoEffect, "megatron"},
    {"--qkv-format", kString, "thd",
     "Attention input layout of the Megatron backend (packed thd or padded bshd).", kNoEffect,
     "thd|bshd"},
    {"--qwen-gdn-backend", kString, "fla",
     "Kernel library for Qwen gated-delta-net (linear attention) layers in slime.", kNoEffect,
     "fla|flashqla"},
    {"--train-env-vars", kJson, "{}",
     "JSON object of extra environment variables for the Python training processes.", kNoEffect},
    {"--train-memory-margin-bytes", kInt, "1073741824",
     "GPU memory slime keeps free when it reserves training memory (vime reserves none ahead: "
     "memory only).",
     kNoEffect},
    {"--megatron-to-hf-mode", kString, "raw",
     "How slime converts Megatron weights to HF names for the engine (hand-written or "
     "Megatron-Bridge); vime has one converter.",
     kNoEffect, "raw|bridge"},
    {"--recompute-loss-function", kStoreTrue, nullptr,
     "Recompute the loss function's activations in the backward pass (memory only, same results; "
     "vime keeps them).",
     kNoEffect},
    {"--log-probs-chunk-size", kInt, "-1",
     "Compute log-probs from logits in chunks of this many tokens to save memory (-1: one chunk)."},
    {"--only-train-params-name-list", kStringList, nullptr,
     "Regexes (searched in parameter names) of the parameters to train; all others are frozen. "
     "Exclusive with --freeze-params-name-list."},
    {"--freeze-params-name-list", kStringList, nullptr,
     "Regexes (searched in parameter names) of the parameters to freeze; all others train."},
    {"--lora-rank", kInt, nullptr,
     "Train LoRA adapters of this rank on the actor's linears (PEFT's r) instead of the whole "
     "model: the base stays frozen (no gradient, no optimizer state) and the reference model is "
     "the base with the adapters off."},
    {"--lora-alpha", kFloat, nullptr,
     "LoRA's alpha: the adapters' output is scaled by alpha / rank (default 8, as PEFT)."},
    {"--lora-dropout", kFloat, "0.0", "Dropout on the adapters' input while training (PEFT's)."},
    {"--target-modules", kStringList, "all-linear",
     "The linears that get adapters, by PEFT's names: q_proj k_proj v_proj o_proj gate_proj "
     "up_proj down_proj, or all-linear (all of them; never the output layer)."},
    {"--freeze-indexer", kStoreTrue, nullptr,
     "Freeze the DSA (sparse attention) indexer parameters.", kNotYet},
    {"--allgather-cp", kStoreTrue, nullptr,
     "Context parallelism through all-gather of K/V instead of ring exchange.", kNotYet},
    {"--custom-model-provider-path", kString, nullptr,
     "Plugin that builds the model. Not supported yet: vime builds Llama/Qwen decoders from "
     "--hf-checkpoint's config.json, and plugins cannot construct its Model.",
     kNotYet},
    {"--megatron-config-path", kString, nullptr,
     "YAML with per-role Megatron overrides. Not supported yet: give the actor's settings as flags "
     "(the critic shares them).",
     kNotYet},
    {"--num-critic-only-steps", kInt, "0",
     "Rollouts at the start that train only the critic (PPO); >= --num-rollout gives a "
     "critic-only run."},
    {"--mtp-num-layers", kInt, nullptr, "Multi-token-prediction layers in the model.", kNotYet},
    {"--mtp-loss-scaling-factor", kFloat, "0.2",
     "Weight of the multi-token-prediction loss; used only with MTP layers.", kNoEffect},
    {"--enable-mtp-training", kStoreTrue, nullptr,
     "Train the multi-token-prediction layers too (needs --mtp-num-layers).", kNotYet},
    {"--megatron-deepgemm-forward-layers", kIntList, nullptr,
     "Zero-based dense decoder layers whose linears use an engine-matching block-FP8 DeepGEMM "
     "forward.",
     kNotYet},
    {"--megatron-deepgemm-forward-modules", kStringList, nullptr,
     "Module-name suffixes to switch to DeepGEMM in the selected dense layers.", kNotYet},
    {"--megatron-deepgemm-moe-forward-layers", kIntList, nullptr,
     "Zero-based MoE decoder layers whose grouped experts use a block-FP8 DeepGEMM forward.",
     kNotYet},
    {"--megatron-deepgemm-moe-forward-modules", kStringList, nullptr,
     "Grouped-MLP module-name suffixes to switch to DeepGEMM (default mlp.experts).", kNotYet},
};
}  // namespace
FlagGroup train_backend() { return {"train_backend", "Training backend", kFlags}; }
}  // namespace vime::core::flags
