// Optimizer: Megatron's optimizer, learning-rate schedule, weight-decay schedule and gradient
// clipping. slime resets --lr to 1e-6. vime implements Adam (decoupled weight decay, as Megatron's
// Adam); sample-based schedules, precision-aware state and CPU offload are kNotYet.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    // --- optimizer
    {"--optimizer", kString, "adam",
     "Optimizer; adam is Adam with decoupled weight decay (AdamW); vime refuses the others.", kYes,
     "adam|sgd|muon|dist_muon"},
    {"--adam-beta1", kFloat, "0.9", "Adam's decay rate of the running gradient mean."},
    {"--adam-beta2", kFloat, "0.999", "Adam's decay rate of the running squared-gradient mean."},
    {"--adam-eps", kFloat, "1e-08", "Adam's denominator epsilon."},
    {"--sgd-momentum", kFloat, "0.9",
     "Momentum of the SGD optimizer (vime trains with adam only; --optimizer sgd is refused).",
     kNoEffect},
    {"--clip-grad", kFloat, "1.0",
     "Clip gradients to this global L2 norm before each step (0 turns clipping off)."},
    {"--train-iters", kInt, nullptr,
     "Total optimizer steps of the run: the horizon of the LR and weight-decay schedules."},
    {"--train-samples", kInt, nullptr,
     "Total training samples of the run (sample-based schedules).", kNotYet},

    // --- learning rate
    {"--lr", kFloat, "1e-6", "Peak learning rate (slime's default 1e-6)."},
    {"--min-lr", kFloat, "0.0", "Floor the learning-rate schedule decays to."},
    {"--lr-decay-style", kString, "linear",
     "Shape of the decay from --lr to --min-lr after warm-up.", kYes,
     "constant|linear|cosine|inverse-square-root|WSD"},
    {"--lr-decay-iters", kInt, nullptr, "Steps the decay spans; --train-iters when unset."},
    {"--lr-decay-samples", kInt, nullptr, "Samples the decay spans (sample-based schedule).",
     kNotYet},
    {"--lr-wsd-decay-style", kString, "exponential",
     "Shape of the WSD schedule's annealing phase (--lr-decay-style WSD is refused: vime supports "
     "constant, linear and cosine).",
     kNoEffect, "exponential|linear|cosine|minus_sqrt"},
    {"--lr-wsd-decay-iters", kInt, nullptr,
     "Steps of the WSD schedule's annealing phase (--lr-decay-style WSD is refused).", kNoEffect},
    {"--lr-wsd-decay-samples", kInt, nullptr,
     "Samples of the WSD schedule's annealing phase (sample-based schedule).", kNotYet},
    {"--lr-warmup-iters", kInt, "0", "Steps of linear warm-up from --lr-warmup-init to --lr."},
    {"--lr-warmup-fraction", kFloat, nullptr,
     "Warm-up length as a fraction of the decay steps (instead of --lr-warmup-iters)."},
    {"--lr-warmup-samples", kInt, "0", "Samples of linear warm-up (sample-based schedule).",
     kNotYet},
    {"--lr-warmup-init", kFloat, "0.0", "Learning rate at the start of warm-up."},
    {"--decoupled-lr", kFloat, nullptr,
     "Separate learning rate for the input embedding and output layer.", kNotYet},
    {"--decoupled-min-lr", kFloat, nullptr,
     "Separate learning-rate floor for the input embedding and output layer.", kNotYet},
    {"--override-opt_param-scheduler",
     kStoreTrue,
     nullptr,
     "On resume, take the LR schedule from these flags, not from the checkpoint (what vime always "
     "does: a checkpoint restores only the step counts).",
     kNoEffect,
     {},
     {},
     "--override-opt-param-scheduler"},
    {"--use-checkpoint-opt_param-scheduler",
     kStoreTrue,
     nullptr,
     "On resume, take the LR schedule from the checkpoint. Not supported yet: vime takes the "
     "schedule from the flags and the step counts from the checkpoint.",
     kNotYet,
     {},
     {},
     "--use-checkpoint-opt-param-scheduler"},

    // --- weight decay
    {"--weight-decay", kFloat, "0.01",
     "Decoupled weight decay (biases and norm weights are exempt, as in Megatron)."},
    {"--start-weight-decay", kFloat, nullptr,
     "Weight decay at the first step of a weight-decay schedule. Not supported yet: vime uses a "
     "constant --weight-decay.",
     kNotYet},
    {"--end-weight-decay", kFloat, nullptr,
     "Weight decay at the last step of a weight-decay schedule. Not supported yet: vime uses a "
     "constant --weight-decay.",
     kNotYet},
    {"--weight-decay-incr-style", kString, "constant",
     "Weight-decay schedule. Only constant is supported yet (--weight-decay).", kNotYet,
     "constant|linear|cosine"},

    // --- optimizer state placement and precision
    {"--use-precision-aware-optimizer", kStoreTrue, nullptr,
     "Keep main parameters and optimizer state in the lower precisions given by "
     "--main-params-dtype, --main-grads-dtype, --exp-avg-dtype and --exp-avg-sq-dtype.",
     kNotYet},
    {"--exp-avg-dtype", kString, "fp32",
     "Storage precision of Adam's first moment under --use-precision-aware-optimizer.", kNotYet,
     "fp32|fp16|bf16|fp8"},
    {"--exp-avg-sq-dtype", kString, "fp32",
     "Storage precision of Adam's second moment under --use-precision-aware-optimizer.", kNotYet,
     "fp32|fp16|bf16|fp8"},
    {"--optimizer-cpu-offload", kStoreTrue, nullptr,
     "Keep optimizer state on the CPU and run the step there.", kNotYet},
    {"--optimizer-offload-fraction", kFloat, "1.0",
     "Share of optimizer state offloaded under --optimizer-cpu-offload.", kNoEffect},
    {"--use-torch-optimizer-for-cpu-offload", kStoreTrue, nullptr,
     "Use a torch.optim optimizer for the offloaded state.", kNoEffect},
    {"--overlap-cpu-optimizer-d2h-h2d", kStoreTrue, nullptr,
     "Overlap the offloaded step with gradient and parameter copies.", kNoEffect},
    {"--no-pin-cpu-grads",
     kStoreFalse,
     nullptr,
     "Do not pin offloaded gradients in CPU memory.",
     kNoEffect,
     {},
     "pin_cpu_grads"},
    {"--no-pin-cpu-params",
     kStoreFalse,
     nullptr,
     "Do not pin offloaded parameters in CPU memory.",
     kNoEffect,
     {},
     "pin_cpu_params"},

    // --- Muon (only with --optimizer muon, which vime refuses)
    {"--muon-momentum", kFloat, "0.9", "Momentum of the Muon optimizer.", kNoEffect},
    {"--muon-no-split-qkv",
     kStoreFalse,
     nullptr,
     "Orthogonalize the fused QKV weight as one matrix under Muon.",
     kNoEffect,
     {},
     "muon_split_qkv"},
    {"--muon-use-nesterov", kStoreTrue, nullptr, "Use Nesterov momentum inside Muon.", kNoEffect},
    {"--muon-scale-mode", kString, "spectral", "How Muon scales its update.", kNoEffect,
     "spectral|unit_rms_norm|shape_scaling"},
    {"--muon-fp32-matmul-prec", kString, "medium",
     "fp32 matmul precision of Muon's Newton-Schulz iteration.", kNoEffect, "low|medium|high"},
    {"--muon-num-ns-steps", kInt, "5", "Newton-Schulz steps per Muon update.", kNoEffect},
    {"--muon-tp-mode", kString, "blockwise", "How Muon orthogonalizes tensor-parallel weights.",
     kNoEffect, "blockwise|duplicated|distributed"},
    {"--muon-extra-scale-factor", kFloat, "1.0", "Extra multiplier on the Muon update.", kNoEffect},
};
}  // namespace
FlagGroup optimizer() { return {"optimizer", "Optimizer and learning rate", kFlags}; }
}  // namespace vime::core::flags
