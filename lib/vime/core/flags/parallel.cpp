// Parallel: Megatron's model-parallel sizes and distributed-training flags. vime trains with data,
// tensor, context and expert parallelism; every other parallel size is kNotYet: the default 1
// passes, 2 is refused by name. Communication-overlap and bucketing knobs change nothing vime
// computes (kNoEffect).
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    // --- model-parallel sizes
    {"--tensor-model-parallel-size", kInt, "1",
     "Tensor-parallel degree (GPUs sharing each layer, Megatron-style: column/row-parallel "
     "linears, vocab-parallel embedding, output layer and log-probs; adjacent ranks form a "
     "tensor-parallel group). Must divide the trainer's ranks and the model's heads."},
    {"--pipeline-model-parallel-size", kInt, "1",
     "Pipeline-parallel degree (stages the layers are split into).", kNotYet},
    {"--context-parallel-size", kInt, "1",
     "Context-parallel degree (GPUs sharing each sequence, Megatron-style: each packed sample is "
     "cut into 2N chunks, rank r holding chunks r and 2N-1-r, attention over all-gathered keys and "
     "values). Ranks are ordered tensor, context, data parallel; --max-tokens-per-gpu counts a "
     "rank's share. tensor x context parallel size must divide the trainer's ranks."},
    {"--expert-model-parallel-size", kInt, "1",
     "Expert-parallel degree for MoE layers (Megatron's alltoall dispatcher): consecutive "
     "data-parallel ranks split each layer's experts evenly; after the replicated router, tokens "
     "travel to their experts' ranks and back by all-to-all. Must divide the data-parallel size "
     "and --num-experts; tensor and context parallel size 1."},
    {"--expert-tensor-parallel-size", kInt, nullptr,
     "Tensor-parallel degree inside MoE experts. Without expert parallelism vime splits every "
     "expert's FFN over the tensor-parallel group like the dense MLP (the same results, another "
     "memory layout); with --expert-model-parallel-size > 1 it must be 1."},
    {"--sequence-parallel", kStoreTrue, nullptr,
     "Shard norms and dropout along the sequence across the tensor-parallel group; Megatron turns "
     "it off at tensor-parallel size 1. It changes no result: vime's tensor parallelism keeps the "
     "activations between layers whole on each rank (more activation memory, same numbers).",
     kNoEffect},
    {"--decoder-first-pipeline-num-layers", kInt, nullptr,
     "Layers on the first pipeline stage (even split when unset).", kNotYet},
    {"--decoder-last-pipeline-num-layers", kInt, nullptr,
     "Layers on the last pipeline stage (even split when unset).", kNotYet},
    {"--pipeline-model-parallel-layout", kString, nullptr,
     "Custom placement of layers on pipeline stages, e.g. \"E|(t|)*3,m|m||L\".", kNotYet},
    {"--virtual-pipeline-model-parallel-size", kInt, nullptr,
     "Virtual pipeline stages per pipeline rank (older Megatron spelling).", kNotYet},
    {"--num-layers-per-virtual-pipeline-stage", kInt, nullptr,
     "Layers per virtual pipeline stage (interleaved schedule).", kNotYet},
    {"--num-virtual-stages-per-pipeline-rank", kInt, nullptr,
     "Virtual pipeline stages per pipeline rank (interleaved schedule).", kNotYet},
    {"--microbatch-group-size-per-virtual-pipeline-stage",
     kInt,
     nullptr,
     "Consecutive micro-batches per virtual pipeline stage; pipeline parallelism only.",
     kNoEffect,
     {},
     "microbatch_group_size_per_vp_stage"},
    {"--account-for-embedding-in-pipeline-split", kStoreTrue, nullptr,
     "Count the input embedding as a layer when splitting pipeline stages.", kNoEffect},
    {"--account-for-loss-in-pipeline-split", kStoreTrue, nullptr,
     "Count the loss as a layer when splitting pipeline stages.", kNoEffect},
    {"--cp-comm-type", kStringList, "p2p",
     "Context-parallel communication per layer (p2p, a2a, allgather, a2a+p2p).", kNoEffect},
    {"--hierarchical-context-parallel-sizes", kIntList, nullptr,
     "Levels of hierarchical context parallelism.", kNoEffect},

    // --- distributed runtime (--distributed-backend and --distributed-timeout-minutes, whose
    // Megatron defaults slime resets, live in cluster.cpp)
    {"--distributed-timeout-seconds-after-init", kInt, nullptr,
     "Tighter collective timeout applied once initialization is done.", kNoEffect},
    {"--use-distributed-optimizer", kStoreTrue, nullptr,
     "Shard fp32 master weights and Adam state across data-parallel ranks (ZeRO-1: gradients "
     "reduce-scattered, parameters all-gathered); slime's scripts turn it on."},
    {"--num-distributed-optimizer-instances", kInt, "1",
     "Copies of the distributed optimizer across the data-parallel group.", kNoEffect},
    {"--overlap-grad-reduce", kStoreTrue, nullptr,
     "Overlap the data-parallel gradient reduction with the backward pass.", kNoEffect},
    {"--overlap-param-gather", kStoreTrue, nullptr,
     "Overlap the distributed optimizer's parameter all-gather with the forward pass.", kNoEffect},
    {"--overlap-param-gather-with-optimizer-step", kStoreTrue, nullptr,
     "Overlap the first parameter all-gather bucket with the optimizer step.", kNoEffect},
    {"--no-align-grad-reduce",
     kStoreFalse,
     nullptr,
     "Let each pipeline stage launch its gradient reduction on its own.",
     kNoEffect,
     {},
     "align_grad_reduce"},
    {"--no-align-param-gather",
     kStoreFalse,
     nullptr,
     "Let each pipeline stage launch its parameter all-gather on its own.",
     kNoEffect,
     {},
     "align_param_gather"},
    {"--ddp-num-buckets", kInt, nullptr, "Number of data-parallel communication buckets.",
     kNoEffect},
    {"--ddp-bucket-size", kInt, nullptr, "Size of a data-parallel communication bucket.",
     kNoEffect},
    {"--ddp-pad-buckets-for-high-nccl-busbw", kStoreTrue, nullptr,
     "Pad bucket sizes to a large power of two for NCCL bandwidth.", kNoEffect},
    {"--ddp-reduce-scatter-with-fp32-accumulation", kStoreTrue, nullptr,
     "Send low-precision gradients but accumulate the reduce-scatter in fp32.", kNoEffect},
    {"--ddp-average-in-collective", kStoreTrue, nullptr,
     "Average gradients inside the collective instead of after it.", kNoEffect},
    {"--no-gradient-reduce-div-fusion",
     kStoreFalse,
     nullptr,
     "Do not fuse the division into the gradient reduction.",
     kNoEffect,
     {},
     "gradient_reduce_div_fusion"},
    {"--no-overlap-p2p-communication",
     kStoreFalse,
     nullptr,
     "Do not overlap pipeline send/receive with compute.",
     kNoEffect,
     {},
     "overlap_p2p_comm"},
    {"--overlap-p2p-communication-warmup-flush",
     kStoreTrue,
     nullptr,
     "Overlap pipeline send/receive in the warm-up and flush phases too.",
     kNoEffect,
     {},
     "overlap_p2p_comm_warmup_flush"},
    {"--defer-embedding-wgrad-compute", kStoreTrue, nullptr,
     "Defer the output-layer weight-gradient GEMM to the pipeline flush.", kNoEffect},
    {"--tp-comm-overlap", kStoreTrue, nullptr,
     "Overlap tensor-parallel communication with GEMMs (Transformer Engine).", kNoEffect},
    {"--use-tp-pp-dp-mapping", kStoreTrue, nullptr,
     "Order ranks tp-cp-ep-pp-dp instead of tp-cp-ep-dp-pp.", kNoEffect},
    {"--nccl-communicator-config-path", kString, nullptr,
     "YAML file of per-communicator NCCL settings.", kNoEffect},
    {"--use-nccl-ub",
     kStoreTrue,
     nullptr,
     "Register data-parallel buffers with NCCL user buffers.",
     kNoEffect,
     {},
     "nccl_ub"},
    {"--use-sharp", kStoreTrue, nullptr, "Enable InfiniBand SHARP in-network reductions.",
     kNoEffect},
    {"--disable-gloo-process-groups",
     kStoreFalse,
     nullptr,
     "Create no Gloo process groups next to the NCCL ones.",
     kNoEffect,
     {},
     "enable_gloo_process_groups"},
};
}  // namespace
FlagGroup parallel() { return {"parallel", "Parallelism and distributed", kFlags}; }
}  // namespace vime::core::flags
