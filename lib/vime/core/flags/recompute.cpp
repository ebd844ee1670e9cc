// Recompute: Megatron's activation-recomputation flags. Recomputation trades compute for memory and
// never changes results. vime recomputes whole layers (full granularity); validation refuses
// selective.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--recompute-granularity", kString, nullptr,
     "Recompute activations in the backward pass: full (whole layers, vime's mode) or selective "
     "(submodules); unset keeps all activations.",
     kYes, "full|selective"},
    {"--recompute-method", kString, nullptr,
     "Which layers full recompute covers: uniform (every chunk of --recompute-num-layers layers) "
     "or block (the first --recompute-num-layers layers).",
     kYes, "uniform|block"},
    {"--recompute-num-layers", kInt, nullptr,
     "Layers per recompute chunk (uniform) or layers recomputed (block)."},
    {"--recompute-activations", kStoreTrue, nullptr,
     "Shorthand for --recompute-granularity selective."},
    {"--recompute-modules", kStringList, nullptr,
     "Submodules Megatron's selective recompute covers (vime recomputes whole layers with "
     "--recompute-granularity full; memory only, same results).",
     kNoEffect, "core_attn|moe_act|layernorm|mla_up_proj|mlp|moe|shared_experts"},
    {"--distribute-saved-activations", kStoreTrue, nullptr,
     "Shard recompute checkpoints across the tensor-parallel group.", kNoEffect},
    {"--cpu-offloading-num-layers", kInt, "0",
     "Layers whose activations are offloaded to CPU memory.", kNotYet},
    {"--moe-layer-recompute", kStoreTrue, nullptr,
     "Recompute MoE layers (deprecated in Megatron); vime has no MoE layers.", kNoEffect},
};
}  // namespace
FlagGroup recompute() { return {"recompute", "Activation recomputation", kFlags}; }
}  // namespace vime::core::flags
