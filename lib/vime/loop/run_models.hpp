// The models and tokenizer of a run, from slime's flags (RunModelsOptions): the actor from --load
// (resume), else --ref-load, else --hf-checkpoint (vime takes an HF directory wherever a checkpoint
// goes); the reference model from --ref-load, else --hf-checkpoint; the tokenizer from
// --hf-checkpoint.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <string>

#include "vime/args.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/model/model.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace vime::loop {

// The current CUDA device (cuda:<index>; a rank binds its own first) when there is a GPU, else
// the CPU.
at::Device run_device();

// LibTorch's intra-op threads for a model on the CPU when OMP_NUM_THREADS is unset: 1 for small
// models (hidden size up to kSmallCpuHiddenSize), whose GEMMs are too small to split: on the
// quickstart's SFT (hidden 64) 2 threads cost ~25x the system time of 1 for the same wall time,
// the second thread spinning in OpenMP's barrier, and OMP_WAIT_POLICY=PASSIVE turns the spinning
// into futex calls that cost more. Otherwise LibTorch's default (one per core) stays. Returns the
// thread count in use.
inline constexpr int64_t kSmallCpuHiddenSize = 256;
int set_cpu_threads(const ModelConfig& config, at::Device device);
// "1 thread", "4 threads".
std::string threads_text(int threads);

// The tokenizer of --hf-checkpoint (tokenizer_path wins when set). Throws UsageError naming the
// flag when it is missing or holds no tokenizer.
std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const RunModelsOptions& options);

// Where the actor's architecture comes from: --load when it holds a checkpoint, else --ref-load,
// else --hf-checkpoint. Throws UsageError when none of them is a model.
ckpt::ResolvedCheckpoint actor_source(const RunModelsOptions& options);

// --ref-load, else --hf-checkpoint, resolved; nullopt when neither is set.
std::optional<ckpt::ResolvedCheckpoint> reference_source(const RunModelsOptions& options);

// --opd-teacher-load resolved (at --opd-teacher-ckpt-step) when --use-opd --opd-type megatron
// asks for an in-trainer teacher; nullopt otherwise. Throws UsageError when nothing is there.
std::optional<ckpt::ResolvedCheckpoint> opd_teacher_source(const RunModelsOptions& options);

// The embedded engine's options: the flags (NativeEngineOptions::from) and the EOS ids of
// --hf-checkpoint's generation_config.json (Qwen3 ends turns with <|im_end|>, not the tokenizer's
// EOS).
engine::NativeEngineOptions engine_options(const Args& args);

// The same from Args, for callers that hold only Args (vime serve).
at::ScalarType run_dtype(const Args& args);  // --bf16 / --fp16, else fp32
std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const Args& args);
ckpt::ResolvedCheckpoint actor_source(const Args& args);

}  // namespace vime::loop
