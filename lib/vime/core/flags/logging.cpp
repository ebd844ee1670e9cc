// Logging: extra rollout metrics, TensorBoard and Weights & Biases settings.
// Spec: shared/spec/slime_reference.md §1, §10.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--log-multi-turn", kStoreTrue, nullptr,
     "Log multi-turn metrics: full vs. model-generated response lengths and turn counts."},
    {"--log-passrate", kStoreTrue, nullptr,
     "Log pass@k (k = 1, 2, 4, ... up to the group size) of rollout and eval groups."},
    {"--log-reward-category", kString, nullptr,
     "Key of the reward dict whose values are counted per category (e.g. why a sample failed)."},
    {"--log-correct-samples", kStoreTrue, nullptr,
     "Log the response-length quartiles and entropy of samples with raw reward 1."},
    {"--metrics-jsonl", kString, nullptr,
     "vime: append every logged metric dict as one JSON line to this file (unset: "
     "{--save}/metrics.jsonl when --save is set)."},
    {"--use-tensorboard", kStoreTrue, nullptr, "Write metrics as TensorBoard event files."},
    {"--tb-project-name", kString, nullptr, "TensorBoard log directory (unset: $TENSORBOARD_DIR)."},
    {"--tb-experiment-name", kString, nullptr, "TensorBoard run name under the project."},
    {"--use-wandb", kStoreTrue, nullptr, "Send metrics to Weights & Biases.", kNotYet},
    {"--wandb-mode", kString, nullptr, "W&B mode (unset: $WANDB_MODE, else online).", kYes,
     "online|offline|disabled"},
    {"--wandb-dir", kString, nullptr, "Directory for local W&B files (unset: ./wandb)."},
    {"--wandb-key", kString, nullptr, "W&B API key."},
    {"--wandb-host", kString, nullptr, "W&B server URL."},
    {"--wandb-team", kString, nullptr, "W&B entity (team)."},
    {"--wandb-group", kString, nullptr, "W&B group; also the base of the run name."},
    {"--wandb-project", kString, nullptr, "W&B project."},
    {"--wandb-run-id", kString, nullptr, "W&B run id to resume."},
    {"--disable-wandb-random-suffix",
     kStoreFalse,
     nullptr,
     "Do not append a random 6-character suffix to the W&B run name.",
     kYes,
     {},
     "wandb_random_suffix"},
    {"--wandb-always-use-train-step", kStoreTrue, nullptr,
     "Use the train step as the x-axis of every metric (rollout id x rollout samples / global "
     "batch size) instead of the rollout id."},
};
}  // namespace
FlagGroup logging() { return {"logging", "Logging", kFlags}; }
}  // namespace vime::core::flags
