// Logging: extra rollout metrics, TensorBoard and Weights & Biases settings.
// slime: slime/utils/arguments.py, slime/utils/metric_utils.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--log-multi-turn", kStoreTrue, nullptr,
     "Log multi-turn metrics. Not supported yet: log them from a "
     "--custom-rollout-log-function-path plugin.",
     kNotYet},
    {"--log-passrate", kStoreTrue, nullptr,
     "Log pass@k (k = 1, 2, 4, ... up to the group size) of rollout and eval groups."},
    {"--log-reward-category", kString, nullptr,
     "Key of the reward dict whose values are counted per category. Not supported yet: log it from "
     "a --custom-rollout-log-function-path plugin.",
     kNotYet},
    {"--log-correct-samples", kStoreTrue, nullptr,
     "Log the response-length quartiles and entropy of samples with raw reward 1. Not supported "
     "yet: log them from a --custom-rollout-log-function-path plugin.",
     kNotYet},
    {"--log-interval", kInt, "1",
     "Print the console metrics line of train/step and rollout/step every N steps (Megatron's "
     "flag; its default is 100); eval lines always print, and --metrics-jsonl and TensorBoard get "
     "every step."},
    {"--metrics-jsonl", kString, nullptr,
     "vime: append every logged metric dict as one JSON line to this file (unset: "
     "{--save}/metrics.jsonl when --save is set)."},
    {"--use-tensorboard", kStoreTrue, nullptr, "Write metrics as TensorBoard event files."},
    {"--tb-project-name", kString, nullptr, "TensorBoard log directory (unset: $TENSORBOARD_DIR)."},
    {"--tb-experiment-name", kString, nullptr, "TensorBoard run name under the project."},
    {"--use-wandb", kStoreTrue, nullptr, "Send metrics to Weights & Biases.", kNotYet},
    {"--wandb-mode", kString, nullptr, "W&B mode (unset: $WANDB_MODE, else online).", kNoEffect,
     "online|offline|disabled"},
    {"--wandb-dir", kString, nullptr, "Directory for local W&B files (unset: ./wandb).", kNoEffect},
    {"--wandb-key", kString, nullptr, "W&B API key.", kNoEffect},
    {"--wandb-host", kString, nullptr, "W&B server URL.", kNoEffect},
    {"--wandb-team", kString, nullptr, "W&B entity (team).", kNoEffect},
    {"--wandb-group", kString, nullptr, "W&B group; also the base of the run name.", kNoEffect},
    {"--wandb-project", kString, nullptr, "W&B project.", kNoEffect},
    {"--wandb-run-id", kString, nullptr, "W&B run id to resume.", kNoEffect},
    {"--disable-wandb-random-suffix",
     kStoreFalse,
     nullptr,
     "Do not append a random 6-character suffix to the W&B run name.",
     kNoEffect,
     {},
     "wandb_random_suffix"},
    {"--wandb-always-use-train-step", kStoreTrue, nullptr,
     "Use the train step as the x-axis of every metric (rollout id x rollout samples / global "
     "batch size) instead of the rollout id."},
};
}  // namespace
FlagGroup logging() { return {"logging", "Logging", kFlags}; }
}  // namespace vime::core::flags
