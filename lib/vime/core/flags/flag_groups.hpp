// Every flag group vime knows, in --help order. Each function is defined in the file of the same
// name.
#pragma once

#include "vime/core/flag_spec.hpp"

namespace vime::core::flags {

FlagGroup general();  // general.cpp: --config, --dry-run

// slime's own groups (slime/utils/arguments.py)
FlagGroup cluster();  // cluster.cpp: --actor-num-nodes, --colocate, --offload, ...
FlagGroup
train_backend();          // train_backend.cpp: --qwen-gdn-backend, --log-probs-chunk-size, MTP, ...
FlagGroup weight_sync();  // weight_sync.cpp: --update-weight-*, --keep-old-actor, ...
FlagGroup rollout();  // rollout.cpp: --hf-checkpoint, --rollout-*, --over-sampling-batch-size, ...
FlagGroup vllm();     // vllm.cpp: vime-owned --vllm-* and the router flags vime itself reads
FlagGroup fault_tolerance();  // fault_tolerance.cpp
FlagGroup data();             // data.cpp: --prompt-data, keys, batch sizes, dynamic batching
FlagGroup eval();             // eval.cpp
FlagGroup checkpoint();       // checkpoint.cpp: slime's and Megatron's --load/--save/... flags
FlagGroup algorithm();        // algorithm.cpp: estimators, clipping, KL, TIS, OPD, ...
FlagGroup reward();           // reward.cpp: --rm-type, --custom-rm-path, ...
FlagGroup hooks();            // hooks.cpp: every --*-path customization hook not listed above
FlagGroup logging();          // logging.cpp: wandb, tensorboard, --log-*
FlagGroup debug();            // debug.cpp: debug, profiling and CI flags

// Megatron-style groups (the flags slime's scripts pass through to Megatron)
FlagGroup model();          // model.cpp: architecture as scripts/models presets use it
FlagGroup parallel();       // parallel.cpp: TP/PP/CP/EP sizes, sequence parallel, distributed
FlagGroup recompute();      // recompute.cpp
FlagGroup optimizer();      // optimizer.cpp: optimizer, LR schedule, weight decay, clipping
FlagGroup precision();      // precision.cpp: --bf16, --fp16, ...
FlagGroup megatron_misc();  // megatron_misc.cpp: implementation knobs with no effect in vime

}  // namespace vime::core::flags
