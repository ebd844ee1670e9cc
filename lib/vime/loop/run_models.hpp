// The models and tokenizer of a run, from slime's flags: the actor from --load (resume), else
// --ref-load, else --hf-checkpoint (vime takes an HF directory wherever a checkpoint goes); the
// reference model when a KL term or --ci-test needs one; the tokenizer from --hf-checkpoint.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>

#include "vime/args.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/model/model.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::loop {

// CUDA when there is a GPU, else the CPU.
at::Device run_device();
// --bf16 / --fp16, else fp32.
at::ScalarType run_dtype(const Args& args);

// The tokenizer of --hf-checkpoint (--tokenizer-path wins when set). Throws UsageError naming the
// flag when it is missing or holds no tokenizer.
std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const Args& args);

// Where the actor's architecture comes from: --load when it holds a checkpoint, else --ref-load,
// else --hf-checkpoint. Throws UsageError when none of them is a model.
ckpt::ResolvedCheckpoint actor_source(const Args& args);

// --ref-load, else --hf-checkpoint, resolved; nullopt when neither is set.
std::optional<ckpt::ResolvedCheckpoint> reference_source(const Args& args);

// True when training reads reference log-probs: a KL coefficient, --use-kl-loss, or --ci-test.
bool needs_reference_model(const Args& args);

// The embedded engine's options: the flags (NativeEngineOptions::from_args) and the EOS ids of
// --hf-checkpoint's generation_config.json (Qwen3 ends turns with <|im_end|>, not the tokenizer's
// EOS).
engine::NativeEngineOptions engine_options(const Args& args);

// Args as the trainer reads them: --ref-load defaults to --hf-checkpoint, so a run given only an
// HF directory starts from its weights (slime needs a Megatron --ref-load for that).
Args with_run_defaults(Args args);

}  // namespace vime::loop
