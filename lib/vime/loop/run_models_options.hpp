// Where a run's models and tokenizer come from (`vime train`, `vime eval`, `vime serve`):
// precision,
// --hf-checkpoint, --load / --ref-load and their steps, read once.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::loop {

struct RunModelsOptions {
  at::ScalarType dtype = at::kFloat;  // --bf16 / --fp16, else fp32
  std::optional<std::string> hf_checkpoint;
  // tokenizer_path (a --custom-config-path key, no flag): the tokenizer's directory when set.
  std::optional<std::string> tokenizer_path;
  std::optional<std::string> load;  // --load, at --ckpt-step (unset: the latest)
  std::optional<int64_t> ckpt_step;
  std::optional<std::string> ref_load;  // --ref-load, at --ref-ckpt-step (unset: the latest)
  std::optional<int64_t> ref_ckpt_step;
  // --use-opd --opd-type megatron: the teacher, at --opd-teacher-ckpt-step (unset: the latest).
  std::optional<std::string> opd_teacher_load;
  std::optional<int64_t> opd_teacher_ckpt_step;
  // --tensor-model-parallel-size: the trainer's models are sharded over this many adjacent ranks.
  int tensor_parallel_size = 1;
  int context_parallel_size = 1;  // --context-parallel-size
  // --expert-model-parallel-size: MoE experts split over this many data-parallel ranks
  // (--expert-tensor-parallel-size 1, the alltoall dispatcher).
  int expert_parallel_size = 1;

  static RunModelsOptions from(const Args& args);
};

// Args as the trainer reads them: --ref-load defaults to --hf-checkpoint, so a run given only an
// HF directory starts from its weights (slime needs a Megatron --ref-load for that).
Args with_run_defaults(Args args);

}  // namespace vime::loop
