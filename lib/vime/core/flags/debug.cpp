// Debug and CI: rollout-only / train-only runs, saving and replaying rollout and train data,
// memory and profiling tools, network settings and CI checks.
// slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--debug-rollout-only", kStoreTrue, nullptr,
     "Run only the rollouts (no training); exclusive with --debug-train-only."},
    {"--debug-train-only", kStoreTrue, nullptr,
     "Run only training, without rollout engines (with --load-debug-rollout-data)."},
    {"--save-debug-rollout-data", kString, nullptr,
     "Save each rollout's data to this path template ({rollout_id} is filled in)."},
    {"--load-debug-rollout-data", kString, nullptr,
     "Train on rollout data saved by --save-debug-rollout-data (path template with {rollout_id}) "
     "instead of generating; implies --debug-train-only."},
    {"--load-debug-rollout-data-subsample", kFloat, nullptr,
     "Fraction of the loaded debug rollout data to keep, for faster runs."},
    {"--load-forge-rollout-data", kString, nullptr,
     "Saved rollout data that a forge-load rollout function replays while engines stay live. Not "
     "supported yet: use --load-debug-rollout-data.",
     kNotYet},
    {"--save-debug-train-data", kString, nullptr,
     "Save each step's train data (path template with {rollout_id} and {rank}). Not supported yet: "
     "use --save-debug-rollout-data.",
     kNotYet},
    {"--dump-details", kString, nullptr,
     "Directory for full run details. Not supported yet: use --save-debug-rollout-data and "
     "--metrics-jsonl.",
     kNotYet},
    {"--memory-snapshot-dir", kString, ".",
     "Directory for GPU memory snapshots (only with --record-memory-history, which is not "
     "supported yet).",
     kNoEffect},
    {"--memory-snapshot-num-steps", kInt, nullptr,
     "Write the memory snapshot after this many steps (only with --record-memory-history, which is "
     "not supported yet).",
     kNoEffect},
    {"--record-memory-history", kStoreTrue, nullptr,
     "Record the GPU allocator's history for memory snapshots. Not supported yet.", kNotYet},
    {"--memory-recorder", kString, "torch", "Python memory profiler slime uses.", kNoEffect,
     "torch|memray"},
    {"--profile-target", kStringList, "train_overall",
     "Phases slime's PyTorch profiler wraps (only with --use-pytorch-profiler, which vime does not "
     "support).",
     kNoEffect, "train_overall|train_actor|train_log_probs"},
    {"--http-proxy", kString, nullptr,
     "HTTP proxy for requests to engines and reward services. Not supported yet: set http_proxy in "
     "the environment of the reward service's client instead.",
     kNotYet},
    {"--use-distributed-post", kStoreTrue, nullptr, "Spread slime's HTTP posts over Ray workers.",
     kNoEffect},
    {"--ci-test", kStoreTrue, nullptr,
     "CI mode: assert the run's invariants (e.g. actor = ref log-probs at rollout 0, bounded "
     "train/rollout log-prob gap)."},
    {"--ci-disable-kl-checker", kStoreTrue, nullptr, "CI mode: skip the KL-is-zero check."},
    {"--ci-train-rollout-logprob-abs-diff-threshold", kFloat, "0.1",
     "CI mode: largest allowed train/train_rollout_logprob_abs_diff."},
    {"--ci-save-grad-norm", kString, nullptr,
     "CI mode: save each step's grad norm to this path template. Not supported yet: "
     "train/grad_norm is in --metrics-jsonl.",
     kNotYet},
    {"--ci-load-grad-norm", kString, nullptr,
     "CI mode: check each step's grad norm against a saved one. Not supported yet: compare "
     "train/grad_norm of two --metrics-jsonl files.",
     kNotYet},
};
}  // namespace
FlagGroup debug() { return {"debug", "Debug and CI", kFlags}; }
}  // namespace vime::core::flags
