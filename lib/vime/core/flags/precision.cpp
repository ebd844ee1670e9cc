// Precision: Megatron's mixed-precision flags. slime always trains in bf16 unless --fp16 is given
// (set_default_megatron_args sets bf16 = not fp16); vime does the same and keeps fp32 main weights,
// gradients and Adam state. fp16 (with its loss scaling), fp8 and fp4 are kNotYet.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--bf16", kStoreTrue, nullptr,
     "Compute in bfloat16 with fp32 main weights; slime and vime turn it on whenever --fp16 is "
     "not given."},
    {"--fp16", kStoreTrue, nullptr, "Compute in float16 with dynamic loss scaling.", kNotYet},
    {"--grad-reduce-in-bf16", kStoreTrue, nullptr,
     "Reduce gradients across data-parallel ranks in bfloat16 instead of fp32.", kNotYet},
    {"--main-params-dtype", kString, "fp32",
     "Precision of the main (master) weights under --use-precision-aware-optimizer.", kNotYet,
     "fp32|fp16"},
    {"--main-grads-dtype", kString, "fp32",
     "Precision of the main gradients under --use-precision-aware-optimizer.", kNotYet,
     "fp32|bf16"},
    {"--fp32-residual-connection", kStoreTrue, nullptr, "Keep the residual stream in fp32.",
     kNotYet},
    {"--disable-bf16-reduced-precision-matmul", kStoreTrue, nullptr,
     "Forbid reduced-precision accumulation inside bf16 matmuls.", kNotYet},

    // --- fp16 loss scaling (fp16 only)
    {"--loss-scale", kFloat, nullptr, "Static fp16 loss scale; unset means dynamic scaling.",
     kNoEffect},
    {"--initial-loss-scale", kFloat, "4294967296", "Starting value of the dynamic fp16 loss scale.",
     kNoEffect},
    {"--min-loss-scale", kFloat, "1.0", "Lowest value of the dynamic fp16 loss scale.", kNoEffect},
    {"--loss-scale-window", kFloat, "1000", "Steps between raises of the dynamic fp16 loss scale.",
     kNoEffect},
    {"--hysteresis", kInt, "2", "Overflows tolerated before the dynamic fp16 loss scale drops.",
     kNoEffect},
    {"--apply-query-key-layer-scaling", kStoreTrue, nullptr,
     "Scale attention scores by 1/layer-number for fp16 range (and compute softmax in fp32).",
     kNoEffect},
    {"--fp16-lm-cross-entropy", kStoreTrue, nullptr,
     "Compute the output-layer cross entropy in fp16; vime takes log-probs from fp32 logits.",
     kNoEffect},

    // --- settings vime already has
    {"--attention-softmax-in-fp32", kStoreTrue, nullptr,
     "Run attention masking and softmax in fp32; vime's attention kernels accumulate in fp32 "
     "anyway.",
     kNoEffect},
    {"--accumulate-allreduce-grads-in-fp32", kStoreTrue, nullptr,
     "Accumulate and all-reduce gradients in fp32; vime's main gradients are fp32 anyway.",
     kNoEffect},

    // --- fp8 / fp4 (Transformer Engine)
    {"--fp8-format", kString, nullptr, "Train with fp8 GEMMs in this format.", kNotYet,
     "e4m3|hybrid", "fp8"},
    {"--fp8-recipe", kString, "delayed", "Scaling recipe of fp8 training.", kNoEffect,
     "tensorwise|delayed|mxfp8|blockwise|custom"},
    {"--fp8-margin", kInt, "0", "Scaling margin of fp8 delayed scaling.", kNoEffect},
    {"--fp8-interval", kInt, "1", "Scaling update interval of fp8 (ignored by Megatron too).",
     kNoEffect},
    {"--fp8-amax-history-len", kInt, "1", "Steps of amax history kept per fp8 tensor.", kNoEffect},
    {"--fp8-amax-compute-algo", kString, "most_recent", "How fp8 amax is taken from its history.",
     kNoEffect, "most_recent|max"},
    {"--no-fp8-wgrad",
     kStoreFalse,
     nullptr,
     "Compute weight gradients in higher precision under fp8.",
     kNoEffect,
     {},
     "fp8_wgrad"},
    {"--fp8-param-gather", kStoreTrue, nullptr,
     "Keep compute weights in fp8 and all-gather them so.", kNoEffect},
    {"--first-last-layers-bf16", kStoreTrue, nullptr,
     "Keep the first and last layers in bf16 under fp8.", kNoEffect},
    {"--num-layers-at-start-in-bf16", kInt, "1", "Leading layers kept in bf16 under fp8.",
     kNoEffect},
    {"--num-layers-at-end-in-bf16", kInt, "1", "Trailing layers kept in bf16 under fp8.",
     kNoEffect},
    {"--fp4-format", kString, nullptr, "Train with fp4 GEMMs in this format.", kNotYet, "e2m1",
     "fp4"},
    {"--fp4-recipe", kString, "nvfp4", "Scaling recipe of fp4 training.", kNoEffect,
     "nvfp4|custom"},
    {"--fp4-param-gather",
     kStoreTrue,
     nullptr,
     "Keep compute weights in fp4 and all-gather them so.",
     kNoEffect,
     {},
     "fp4_param"},
};
}  // namespace
FlagGroup precision() { return {"precision", "Mixed precision", kFlags}; }
}  // namespace vime::core::flags
