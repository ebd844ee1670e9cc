// Weight sync: how trained weights reach the rollout engines (NCCL broadcast, disk, colocated
// IPC) and how often. slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--update-weight-mode", kString, "full",
     "full: send every parameter at each sync; delta: send only the bytes that changed since the "
     "last sync.",
     kNotYet, "full|delta"},
    {"--update-weight-transport", kString, "nccl",
     "Carrier for non-colocated syncs: nccl broadcast, or disk (an HF checkpoint under "
     "--update-weight-disk-dir that the engines reload). Colocated engines always use CUDA IPC.",
     kYes, "nccl|disk"},
    {"--update-weight-disk-dir", kString, nullptr,
     "Directory shared by trainer and engines for disk syncs; one checkpoint directory per sync."},
    {"--update-weight-disk-keep-files", kStoreTrue, nullptr,
     "Keep the per-sync checkpoint directories of disk syncs instead of deleting them."},
    {"--update-weight-delta-dir", kString, nullptr,
     "Deprecated spelling of --update-weight-disk-dir; if both are set they must agree."},
    {"--update-weight-delta-keep-files", kStoreTrue, nullptr,
     "Keep the per-sync delta directories after the engines applied them.", kNotYet},
    {"--update-weight-encoding", kString, "indices",
     "Position encoding of delta syncs: int32 indices, uint16 gap deltas, or zstd-compressed "
     "deltas.",
     kNotYet, "indices|deltas|deltas_zstd"},
    {"--update-weight-delta-encoding", kString, "xor",
     "On-disk delta format: xor (new ^ old, apply exactly once) or overwrite (positions + new "
     "values, idempotent).",
     kNotYet, "xor|overwrite"},
    {"--update-weight-delta-checksum", kString, "xxh3-128",
     "Per-tensor checksum verified when a delta is applied.", kNotYet, "xxh3-128|blake3|adler32"},
    {"--update-weight-local-checkpoint-dir", kString, nullptr,
     "Rollout-host-local directory holding a full checkpoint that engines pull published weights "
     "into and reload from (required for delta mode).",
     kNotYet},
    {"--custom-update-weight-post-write-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Runs on each trainer rank after a disk sync's files are "
     "written, before the engines read them (e.g. to publish them on a non-POSIX filesystem)."},
    {"--custom-delta-pre-push-path", kString, nullptr,
     "Plugin run before delta weight files are pushed. Not supported yet (--update-weight-mode "
     "delta is not); use --custom-update-weight-post-write-path with --update-weight-transport "
     "disk.",
     kNotYet},
    {"--update-weight-buffer-size", kInt, "536870912",
     "Bytes of parameters gathered per bucket when sending weights to the engines (512 MiB)."},
    {"--async", kStoreTrue, nullptr,
     "slime's train_async.py: rollout k+1 generates while the trainer trains on rollout k (one "
     "step off-policy), on engines that hold their own weights (the embedded backend puts "
     "--rollout-num-gpus engine replicas after the trainer's GPUs; vLLM engines). Not with "
     "--colocate."},
    {"--fully-async", kStoreTrue, nullptr,
     "slime's examples/fully_async (also selected by --rollout-function-path "
     "slime.rollout.fully_async_rollout.generate_rollout_fully_async): a background loop keeps "
     "--over-sampling-batch-size groups generating across rollouts and weight updates; each "
     "rollout takes the first --rollout-batch-size groups that finished. Implies --async."},
    {"--max-staleness", kInt, nullptr,
     "With --fully-async: a group generated with weights more than N versions older than the "
     "trainer's is dropped and its prompt generated again (rollout/async/stale_dropped_groups); "
     "unset: no limit."},
    {"--update-weights-interval", kInt, "1",
     "Sync weights to the engines every N rollouts (with --async; the synchronous loop syncs after "
     "every rollout, as slime's train.py)."},
    {"--keep-old-actor", kStoreTrue, nullptr,
     "Keep a copy of the weights the engines serve for the old log-probs. Not supported yet: with "
     "--update-weights-interval 1 (the default) the engines serve the trainer's weights, so old "
     "log-probs need no copy.",
     kNotYet},
    {"--release-train", kStoreTrue, nullptr,
     "Tear the trainer down during rollouts and rebuild it from --save before each train step "
     "(needs full + disk sync).",
     kNotYet},
    {"--check-weight-update-equal", kStoreTrue, nullptr,
     "Debug: after a sync, check that the engine's weights equal the trainer's. Not supported yet: "
     "the [weight_sync] tests check it.",
     kNotYet},
    {"--force-fp8-ue8m0-scale", kStoreTrue, nullptr,
     "Quantize block-FP8 rollout weights with power-of-two (UE8M0) scales on any GPU.", kNotYet},
};
}  // namespace
FlagGroup weight_sync() { return {"weight_sync", "Weight sync", kFlags}; }
}  // namespace vime::core::flags
