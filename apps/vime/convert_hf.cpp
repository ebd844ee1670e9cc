// vime convert-hf: HF <-> vime checkpoints, as slime's two tools do.
//   HF -> vime:  vime convert-hf [MODEL_ARGS] --hf-checkpoint DIR --save OUT
//   vime -> HF:  vime convert-hf --input-dir ITER_DIR --output-dir OUT --origin-hf-dir DIR
//                                [--vocab-size N] [-f]
// Tensors are copied in their stored dtype, so a round trip is bit-exact; the HF output carries the
// origin's config and tokenizer files.
#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "commands.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/hf_export.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/peft_adapter.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"

namespace vime::app {
namespace fs = std::filesystem;
namespace {

constexpr const char* kUsage = R"(usage:
  vime convert-hf [MODEL_ARGS] --hf-checkpoint DIR --save OUT
      HF model directory -> vime checkpoint (OUT/iter_0000000, tracker file). MODEL_ARGS, when
      given, must agree with the HF config.json; --padded-vocab-size or
      --make-vocab-size-divisible-by set the vocabulary padding.
  vime convert-hf --input-dir CKPT --output-dir OUT (--origin-hf-dir DIR) [--vocab-size N] [-f]
      vime checkpoint (an iter_NNNNNNN dir or a save dir) -> HF directory. --vocab-size cuts the
      padded vocabulary (default: the config's vocab_size); the origin's config.json and
      tokenizer files are copied; -f overwrites a non-empty OUT. A checkpoint trained with LoRA
      gives its adapter alone in PEFT's files (adapter_config.json, adapter_model.safetensors;
      base_model_name_or_path: --origin-hf-dir), or with --merge-lora the merged HF model.
  MODEL_ARGS are vime train's model flags (vime train --help model). `vime convert` is the same
  command with the same flags.
)";

struct ToHfOptions {
  std::string input, output, origin;
  int64_t vocab_size = 0;  // 0: the config's vocab_size
  bool force = false;
  bool merge_lora = false;

  // The flags of core::flags::convert_hf_to_hf(), checked.
  static ToHfOptions from(const Args& args) {
    if (args.is_set("model_name")) {
      throw UsageError("--model-name is not supported; pass --origin-hf-dir");
    }
    ToHfOptions o;
    o.input = args.get_string("input_dir");
    o.output = args.get_string("output_dir");
    o.origin = args.get_string("origin_hf_dir");
    o.vocab_size = args.get_optional_int("vocab_size").value_or(0);
    o.force = args.get_bool("force");
    o.merge_lora = args.get_bool("merge_lora");
    if (!ckpt::is_hf_dir(o.origin) && !fs::exists(fs::path(o.origin) / "config.json")) {
      throw UsageError("--origin-hf-dir " + o.origin + ": no config.json there");
    }
    return o;
  }
};

int to_hf(const ToHfOptions& o) {
  auto resolved = ckpt::resolve_checkpoint(o.input);
  if (!resolved) throw UsageError("--input-dir " + o.input + ": no vime checkpoint there");
  const fs::path out(o.output);
  if (fs::exists(out) && !fs::is_empty(out) && !o.force) {
    throw UsageError("--output-dir " + o.output + " is not empty (pass -f to overwrite)");
  }
  const fs::path adapter_dir = resolved->dir / "adapter";
  const bool has_adapter = !resolved->is_hf && ckpt::is_peft_adapter_dir(adapter_dir);
  if (o.merge_lora && !has_adapter) {
    throw UsageError("--merge-lora: " + resolved->dir.string() + " holds no LoRA adapter");
  }
  if (has_adapter && !o.merge_lora) {
    auto adapter = ckpt::read_peft_adapter(adapter_dir);
    ckpt::write_peft_adapter(out, adapter.config, adapter.tensors, o.origin);
    std::printf(
        "wrote %s (the LoRA adapter, r %lld, %zu tensors; --merge-lora writes the merged "
        "model)\n",
        out.c_str(), static_cast<long long>(adapter.config.rank), adapter.tensors.size());
    return 0;
  }
  // A LoRA checkpoint's adapter is merged into the loaded weights (ckpt::load_checkpoint).
  auto model = ckpt::load_model(*resolved, ckpt::stored_dtype(*resolved), at::kCPU);
  if (o.vocab_size > model->config().padded_vocab_size) {
    throw UsageError("--vocab-size " + std::to_string(o.vocab_size) + " exceeds the checkpoint's " +
                     std::to_string(model->config().padded_vocab_size) + " rows");
  }
  const int copied = ckpt::write_hf_directory(*model, out, o.origin, o.vocab_size);
  std::printf("wrote %s (%zu tensors, %d files from %s)\n", out.c_str(),
              model->hf_tensors(o.vocab_size).size(), copied, o.origin.c_str());
  return 0;
}

// HF -> vime: --hf-checkpoint and --save (core::flags::convert_hf_from_hf()); the model flags
// stay in `args` for ModelConfig::check_agrees_with_args.
struct FromHfOptions {
  fs::path hf_dir;
  std::string save;
  std::optional<int64_t> padded_vocab_size;
  int64_t make_vocab_size_divisible_by = 128;

  static FromHfOptions from(const Args& args) {
    FromHfOptions o;
    o.hf_dir = args.get_string("hf_checkpoint");
    o.save = args.get_string("save");
    o.padded_vocab_size = args.get_optional_int("padded_vocab_size");
    o.make_vocab_size_divisible_by = args.get_int("make_vocab_size_divisible_by");
    if (!ckpt::is_hf_dir(o.hf_dir)) {
      throw UsageError("--hf-checkpoint " + o.hf_dir.string() +
                       ": not an HF model dir (config.json + *.safetensors)");
    }
    return o;
  }
};

int from_hf(const Args& args) {
  const auto o = FromHfOptions::from(args);
  const fs::path& hf_dir = o.hf_dir;
  ckpt::ResolvedCheckpoint hf{hf_dir, true, 0};
  auto config = ckpt::checkpoint_model_config(hf);
  config.check_agrees_with_args(args);
  config.padded_vocab_size = o.padded_vocab_size.value_or(
      pad_vocab_size(config.vocab_size, o.make_vocab_size_divisible_by));
  if (config.padded_vocab_size < config.vocab_size) {
    throw UsageError("--padded-vocab-size is smaller than the vocabulary");
  }
  Model model(config, ckpt::stored_dtype(hf), at::kCPU);
  model.load_tensors(ckpt::read_safetensors_dir(hf_dir), hf_dir.string());
  ckpt::TrainState state;
  ckpt::SaveOptions save;
  save.save_optimizer = false;
  save.save_rng = false;
  ckpt::save_checkpoint(o.save, model, nullptr, state, save);
  std::printf("wrote %s/%s (%s, vocabulary %lld padded to %lld)\n", o.save.c_str(),
              ckpt::iteration_dir_name(0).c_str(), config.model_type.c_str(),
              static_cast<long long>(config.vocab_size),
              static_cast<long long>(config.padded_vocab_size));
  return 0;
}

}  // namespace

int run_convert_hf(const Arguments& argv) {
  if (auto code = help_exit_code(argv, kUsage, core::flags::convert_hf_help_flags())) return *code;
  // --input-dir picks the direction, as in slime's two tools.
  for (const auto& a : argv) {
    if (a == "--input-dir" || a.starts_with("--input-dir=")) {
      return to_hf(ToHfOptions::from(core::parse_args(argv, core::flags::to_hf_flags())));
    }
  }
  return from_hf(core::flags::parse_with_train_defaults(argv, core::flags::from_hf_flags()));
}

}  // namespace vime::app
