// Cluster: GPU counts for the trainer and the rollout engines, colocation and offloading.
// slime: slime/utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--actor-num-nodes", kInt, "1", "Nodes the training actor runs on."},
    {"--actor-num-gpus-per-node", kInt, "8", "GPUs per node for the training actor."},
    {"--rollout-num-gpus", kInt, nullptr,
     "GPUs for the rollout engines (unset under --colocate: actor nodes x actor GPUs per node; 0: "
     "start only the router, no local engines)."},
    {"--rollout-num-gpus-per-engine", kInt, "1",
     "GPUs per rollout engine; the engine's tensor-parallel size is this divided by its "
     "pipeline-parallel size."},
    {"--num-gpus-per-node", kInt, "8",
     "GPUs per node for slime's Ray placement; vime places engines by --rollout-num-gpus and the "
     "devices it sees.",
     kNoEffect},
    {"--colocate", kStoreTrue, nullptr,
     "Put the rollout engines on the trainer's GPUs; both sides offload in turn (implies "
     "--offload-train and --offload-rollout unless set)."},
    {"--offload", kStoreTrue, nullptr, "Shorthand for --offload-train --offload-rollout."},
    {"--offload-train", kBoolOptional, nullptr,
     "Move the trainer's weights and optimizer off the GPU while rollouts run (unset: on under "
     "--colocate; always on with a critic)."},
    {"--offload-rollout", kBoolOptional, nullptr,
     "Put the rollout engines to sleep (free weights and KV cache) while training runs (unset: on "
     "under --colocate)."},
    {"--master-addr", kString, nullptr,
     "Address of node 0, where rank 0 hosts the rendezvous (MASTER_ADDR; needed with "
     "--actor-num-nodes > 1; default 127.0.0.1)."},
    {"--master-port", kInt, nullptr,
     "Rendezvous port on node 0 (MASTER_PORT; needed with --actor-num-nodes > 1; default: a free "
     "port on one node, 29500 under Slurm)."},
    {"--node-rank", kInt, nullptr,
     "This node's index, 0 .. --actor-num-nodes - 1, when the same command runs on every node "
     "(torchrun's GROUP_RANK / Slurm's SLURM_NODEID when they launch)."},
    {"--distributed-backend", kString, "nccl",
     "Collective backend between trainer ranks (nccl on GPU, gloo on CPU).", kYes, "nccl|gloo"},
    {"--distributed-timeout-minutes", kInt, "10",
     "Timeout of collective operations between trainer ranks, in minutes."},
};
}  // namespace
FlagGroup cluster() { return {"cluster", "Cluster", kFlags}; }
}  // namespace vime::core::flags
