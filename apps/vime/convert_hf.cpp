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
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
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
      tokenizer files are copied; -f overwrites a non-empty OUT.
)";

bool is_weight_file(const fs::path& p) {
  const auto ext = p.extension().string();
  const auto name = p.filename().string();
  return ext == ".safetensors" || ext == ".bin" || ext == ".pt" || ext == ".pth" ||
         name == "model.safetensors.index.json" || name == "pytorch_model.bin.index.json";
}

int to_hf(const Arguments& argv) {
  std::optional<std::string> input, output, origin;
  int64_t vocab_size = 0;
  bool force = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= argv.size()) throw UsageError(std::string(flag) + " needs a value");
      return argv[++i];
    };
    const auto& a = argv[i];
    if (a == "--input-dir")
      input = value("--input-dir");
    else if (a == "--output-dir")
      output = value("--output-dir");
    else if (a == "--origin-hf-dir")
      origin = value("--origin-hf-dir");
    else if (a == "--vocab-size") {
      const auto text = value("--vocab-size");
      try {
        vocab_size = std::stoll(text);
      } catch (const std::exception&) {
        throw UsageError("--vocab-size " + text + ": expected an integer");
      }
    } else if (a == "-f" || a == "--force")
      force = true;
    else if (a == "--model-name") {
      throw UsageError("--model-name is not supported; pass --origin-hf-dir");
    } else
      throw UsageError("unknown flag " + a + " (vime convert-hf --help)");
  }
  if (!input || !output) throw UsageError("--input-dir and --output-dir are required");
  if (!origin)
    throw UsageError("--origin-hf-dir is required (its config and tokenizer are copied)");
  if (!ckpt::is_hf_dir(*origin) && !fs::exists(fs::path(*origin) / "config.json")) {
    throw UsageError("--origin-hf-dir " + *origin + ": no config.json there");
  }
  auto resolved = ckpt::resolve_checkpoint(*input);
  if (!resolved) throw UsageError("--input-dir " + *input + ": no vime checkpoint there");
  const fs::path out(*output);
  if (fs::exists(out) && !fs::is_empty(out) && !force) {
    throw UsageError("--output-dir " + *output + " is not empty (pass -f to overwrite)");
  }
  auto model = ckpt::load_model(*resolved, ckpt::stored_dtype(*resolved), at::kCPU);
  if (vocab_size > model->config().padded_vocab_size) {
    throw UsageError("--vocab-size " + std::to_string(vocab_size) + " exceeds the checkpoint's " +
                     std::to_string(model->config().padded_vocab_size) + " rows");
  }
  const fs::path temp = out.string() + ".tmp";
  fs::remove_all(temp);
  ckpt::save_hf_model(*model, temp, vocab_size);
  int copied = 0;
  for (const auto& entry : fs::directory_iterator(*origin)) {
    if (!entry.is_regular_file() || is_weight_file(entry.path())) continue;
    fs::copy_file(entry.path(), temp / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
    ++copied;
  }
  fs::remove_all(out);
  fs::rename(temp, out);
  std::printf("wrote %s (%zu tensors, %d files from %s)\n", out.c_str(),
              model->hf_tensors(vocab_size).size(), copied, origin->c_str());
  return 0;
}

int from_hf(const Arguments& argv) {
  Args args = core::parse_args(argv);
  if (!args.is_set("hf_checkpoint")) throw UsageError("--hf-checkpoint is required");
  if (!args.is_set("save")) throw UsageError("--save is required (the vime checkpoint dir)");
  const fs::path hf_dir = args.get_string("hf_checkpoint");
  if (!ckpt::is_hf_dir(hf_dir)) {
    throw UsageError("--hf-checkpoint " + hf_dir.string() +
                     ": not an HF model dir (config.json + *.safetensors)");
  }
  ckpt::ResolvedCheckpoint hf{hf_dir, true, 0};
  auto config = ckpt::checkpoint_model_config(hf);
  config.check_agrees_with_args(args);
  config.padded_vocab_size =
      args.is_set("padded_vocab_size")
          ? args.get_int("padded_vocab_size")
          : pad_vocab_size(config.vocab_size, args.get_int("make_vocab_size_divisible_by"));
  if (config.padded_vocab_size < config.vocab_size) {
    throw UsageError("--padded-vocab-size is smaller than the vocabulary");
  }
  Model model(config, ckpt::stored_dtype(hf), at::kCPU);
  model.load_tensors(ckpt::read_safetensors_dir(hf_dir), hf_dir.string());
  ckpt::TrainState state;
  ckpt::save_checkpoint(args.get_string("save"), model, nullptr, state,
                        {.save_optimizer = false, .save_rng = false});
  std::printf("wrote %s/%s (%s, vocabulary %lld padded to %lld)\n", args.get_string("save").c_str(),
              ckpt::iteration_dir_name(0).c_str(), config.model_type.c_str(),
              static_cast<long long>(config.vocab_size),
              static_cast<long long>(config.padded_vocab_size));
  return 0;
}

}  // namespace

int run_convert_hf(const Arguments& argv) {
  for (const auto& a : argv) {
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  for (const auto& a : argv) {
    if (a == "--input-dir") return to_hf(argv);
  }
  return from_hf(argv);
}

}  // namespace vime::app
