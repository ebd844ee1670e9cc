#include "vime/loop/run_models.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <cstdlib>

#include "vime/dist/rank_device.hpp"
#include "vime/engine/generation_config.hpp"
#include "vime/error.hpp"

namespace vime::loop {

at::Device run_device() { return dist::current_device(); }

int set_cpu_threads(const ModelConfig& config, at::Device device) {
  const char* given = std::getenv("OMP_NUM_THREADS");
  if (device.is_cpu() && (given == nullptr || *given == '\0') &&
      config.hidden_size <= kSmallCpuHiddenSize)
    at::set_num_threads(1);
  return at::get_num_threads();
}

std::string threads_text(int threads) {
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const RunModelsOptions& options) {
  const char* flag = "--hf-checkpoint";
  std::string dir;
  if (options.tokenizer_path) {
    flag = "--tokenizer-path";
    dir = *options.tokenizer_path;
  } else if (options.hf_checkpoint) {
    dir = *options.hf_checkpoint;
  } else {
    throw UsageError(
        "--hf-checkpoint is required: vime reads the tokenizer (tokenizer.json) from that HF "
        "directory");
  }
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError(std::string(flag) + " " + dir + ": no such directory");
  }
  try {
    return tokenizer::HfTokenizer::from_directory(dir);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string(flag) + " " + dir + ": " + e.what());
  }
}

namespace {

std::optional<ckpt::ResolvedCheckpoint> resolve(const std::optional<std::string>& dir,
                                                std::optional<int64_t> step) {
  if (!dir) return std::nullopt;
  return ckpt::resolve_checkpoint(*dir, step);
}

}  // namespace

ckpt::ResolvedCheckpoint actor_source(const RunModelsOptions& options) {
  if (auto load = resolve(options.load, options.ckpt_step)) return *load;
  if (auto ref = reference_source(options)) return *ref;
  throw UsageError(
      "no model to train: give --hf-checkpoint (an HF directory with config.json and "
      "safetensors), or --load / --ref-load (a vime checkpoint or HF directory)");
}

std::optional<ckpt::ResolvedCheckpoint> reference_source(const RunModelsOptions& options) {
  struct Candidate {
    const char* flag;
    const std::optional<std::string>& dir;
    std::optional<int64_t> step;
  };
  for (const Candidate& c : {Candidate{"--ref-load", options.ref_load, options.ref_ckpt_step},
                             Candidate{"--hf-checkpoint", options.hf_checkpoint, std::nullopt}}) {
    if (!c.dir) continue;
    auto resolved = resolve(c.dir, c.step);
    if (!resolved.has_value()) {
      throw UsageError(std::string(c.flag) + " " + *c.dir +
                       ": no vime checkpoint or HF model (config.json + safetensors) there");
    }
    return resolved;
  }
  return std::nullopt;
}

std::optional<ckpt::ResolvedCheckpoint> opd_teacher_source(const RunModelsOptions& options) {
  if (!options.opd_teacher_load) return std::nullopt;
  auto resolved = resolve(options.opd_teacher_load, options.opd_teacher_ckpt_step);
  if (!resolved) {
    throw UsageError("--opd-teacher-load " + *options.opd_teacher_load +
                     ": no vime checkpoint or HF model (config.json + safetensors) there");
  }
  return resolved;
}

engine::NativeEngineOptions engine_options(const Args& args) {
  auto options = engine::NativeEngineOptions::from(args);
  const auto run = RunModelsOptions::from(args);
  if (options.eos_token_ids.empty() && run.hf_checkpoint) {
    options.eos_token_ids = engine::eos_token_ids_from_hf_dir(*run.hf_checkpoint);
  }
  return options;
}

at::ScalarType run_dtype(const Args& args) { return RunModelsOptions::from(args).dtype; }

std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const Args& args) {
  return load_run_tokenizer(RunModelsOptions::from(args));
}

ckpt::ResolvedCheckpoint actor_source(const Args& args) {
  return actor_source(RunModelsOptions::from(args));
}

}  // namespace vime::loop
