#include "vime/loop/run_models.hpp"

#include <ATen/Context.h>

#include "vime/engine/generation_config.hpp"
#include "vime/error.hpp"

namespace vime::loop {

at::Device run_device() { return at::hasCUDA() ? at::Device(at::kCUDA) : at::Device(at::kCPU); }

at::ScalarType run_dtype(const Args& args) {
  if (args.has("bf16") && args.get_bool("bf16")) return at::kBFloat16;
  if (args.has("fp16") && args.get_bool("fp16")) return at::kHalf;
  return at::kFloat;
}

std::unique_ptr<tokenizer::HfTokenizer> load_run_tokenizer(const Args& args) {
  const char* flag = "--hf-checkpoint";
  std::string dir;
  if (args.has("tokenizer_path") && args.is_set("tokenizer_path")) {
    flag = "--tokenizer-path";
    dir = args.get_string("tokenizer_path");
  } else if (args.is_set("hf_checkpoint")) {
    dir = args.get_string("hf_checkpoint");
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

std::optional<ckpt::ResolvedCheckpoint> resolve_flag(const Args& args, const char* key,
                                                     const char* step_key) {
  if (!args.is_set(key)) return std::nullopt;
  std::optional<int64_t> step;
  if (step_key != nullptr && args.has(step_key)) step = args.get_optional_int(step_key);
  return ckpt::resolve_checkpoint(args.get_string(key), step);
}

}  // namespace

ckpt::ResolvedCheckpoint actor_source(const Args& args) {
  if (auto load = resolve_flag(args, "load", "ckpt_step")) return *load;
  if (auto ref = reference_source(args)) return *ref;
  throw UsageError(
      "no model to train: give --hf-checkpoint (an HF directory with config.json and "
      "safetensors), or --load / --ref-load (a vime checkpoint or HF directory)");
}

std::optional<ckpt::ResolvedCheckpoint> reference_source(const Args& args) {
  for (const char* key : {"ref_load", "hf_checkpoint"}) {
    if (!args.is_set(key)) continue;
    auto resolved =
        resolve_flag(args, key, key == std::string("ref_load") ? "ref_ckpt_step" : nullptr);
    if (!resolved.has_value()) {
      throw UsageError(args.flag_name(key) + " " + args.get_string(key) +
                       ": no vime checkpoint or HF model (config.json + safetensors) there");
    }
    return resolved;
  }
  return std::nullopt;
}

bool needs_reference_model(const Args& args) {
  if (args.get_string("loss_type") == "sft_loss") return false;
  return args.get_double("kl_coef") != 0 || args.get_bool("use_kl_loss") ||
         args.get_bool("ci_test");
}

engine::NativeEngineOptions engine_options(const Args& args) {
  auto options = engine::NativeEngineOptions::from_args(args);
  if (options.eos_token_ids.empty() && args.is_set("hf_checkpoint")) {
    options.eos_token_ids = engine::eos_token_ids_from_hf_dir(args.get_string("hf_checkpoint"));
  }
  return options;
}

Args with_run_defaults(Args args) {
  if (!args.is_set("ref_load") && args.is_set("hf_checkpoint")) {
    args.set("ref_load", args.get("hf_checkpoint"), ArgSource::kDerived);
  }
  return args;
}

}  // namespace vime::loop
