#include "arith_task.hpp"

#include <ATen/ATen.h>

#include <charconv>
#include <functional>
#include <map>

#include "arith_tokenizer.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/model/model.hpp"

namespace vime::quickstart {
namespace {

namespace fs = std::filesystem;

void write_jsonl(const fs::path& path, const std::vector<ArithProblem>& rows, bool boxed) {
  std::string text;
  for (const auto& row : rows) text += jsonl_row(row, boxed) + "\n";
  write_text_file_atomic(path, text);
}

int64_t parse_int(const std::string& flag, const std::string& value, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    throw UsageError(flag + " takes an integer, got '" + value + "'");
  }
  if (v < min || v > max) {
    throw UsageError(flag + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + value);
  }
  return v;
}

}  // namespace

const char* const kArithTaskUsage =
    "usage: make_arith_task --out DIR [--seed 1] [--digits 2] [--ops +] [--zero-pad 0]\n"
    "                       [--scratch none] [--sft-unreversed 0]\n"
    "                       [--num-train 4000] [--num-test 500]\n"
    "                       [--hidden-size 64] [--num-layers 2] [--num-attention-heads 4]\n"
    "                       [--num-key-value-heads 2]\n"
    "                       [--head-dim 16] [--intermediate-size 192] [--model-seed 1234]\n"
    "Writes DIR/model (tiny random-init Qwen3, HF format, arithmetic tokenizer) and DIR/data\n"
    "(train.jsonl and test.jsonl {input, label}, sft.jsonl with label \\boxed{answer}).\n"
    "With --zero-pad 1 operands have --digits digits each (\"07+45=\").\n"
    "With --scratch reversed the SFT label first writes the answer's digits least significant\n"
    "first, zero-padded (\"250\\boxed{52}\"); train and test labels stay the answer (\"52\").\n"
    "With --sft-unreversed P the SFT labels of P% of the train problems whose answer has the\n"
    "working's full width box the working unreversed (\"57+48=\" -> \"501\\boxed{501}\"): a\n"
    "sloppy teacher for SFT that GRPO, rewarded for the right answer (train.jsonl), has to\n"
    "correct. Needs --scratch reversed.\n"
    "Test and train problems are distinct draws from one seeded stream, so they never overlap.\n";

ArithTaskOptions parse_arith_task_flags(const std::vector<std::string>& argv, bool& help) {
  ArithTaskOptions o;
  help = false;
  constexpr int64_t kBig = int64_t{1} << 40;
  std::map<std::string, std::function<void(const std::string&)>> flags = {
      {"--out", [&](const std::string& v) { o.out = v; }},
      {"--seed", [&](const std::string& v) { o.problems.seed = parse_int("--seed", v, 0, kBig); }},
      {"--digits",
       [&](const std::string& v) { o.problems.digits = parse_int("--digits", v, 1, 9); }},
      {"--ops", [&](const std::string& v) { o.problems.ops = v; }},
      {"--zero-pad",
       [&](const std::string& v) { o.problems.zero_pad = parse_int("--zero-pad", v, 0, 1) == 1; }},
      {"--scratch",
       [&](const std::string& v) {
         if (v != "none" && v != "reversed")
           throw UsageError("--scratch takes none or reversed, got '" + v + "'");
         o.problems.reversed_scratch = v == "reversed";
       }},
      {"--sft-unreversed",
       [&](const std::string& v) {
         o.problems.sft_unreversed = parse_int("--sft-unreversed", v, 0, 100);
       }},
      {"--num-train",
       [&](const std::string& v) { o.problems.num_train = parse_int("--num-train", v, 1, kBig); }},
      {"--num-test",
       [&](const std::string& v) { o.problems.num_test = parse_int("--num-test", v, 1, kBig); }},
      {"--hidden-size",
       [&](const std::string& v) { o.model.hidden_size = parse_int("--hidden-size", v, 8, 8192); }},
      {"--num-layers",
       [&](const std::string& v) { o.model.num_layers = parse_int("--num-layers", v, 1, 128); }},
      {"--num-attention-heads",
       [&](const std::string& v) {
         o.model.num_attention_heads = parse_int("--num-attention-heads", v, 1, 256);
       }},
      {"--num-key-value-heads",
       [&](const std::string& v) {
         o.model.num_key_value_heads = parse_int("--num-key-value-heads", v, 1, 256);
       }},
      {"--head-dim",
       [&](const std::string& v) { o.model.head_dim = parse_int("--head-dim", v, 2, 512); }},
      {"--intermediate-size",
       [&](const std::string& v) {
         o.model.intermediate_size = parse_int("--intermediate-size", v, 8, 65536);
       }},
      {"--model-seed",
       [&](const std::string& v) { o.model_seed = parse_int("--model-seed", v, 0, kBig); }},
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      help = true;
      return o;
    }
    auto eq = arg.find('=');
    bool inline_value = arg.starts_with("--") && eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto it = flags.find(arg);
    if (it == flags.end()) throw UsageError("unknown argument '" + argv[i] + "' (see --help)");
    if (!inline_value) {
      if (i + 1 >= argv.size()) throw UsageError(arg + " needs a value");
      value = argv[++i];
    }
    it->second(value);
  }
  if (o.out.empty()) throw UsageError("--out DIR is required");
  if (o.model.head_dim % 2 != 0) throw UsageError("--head-dim must be even (rotary embedding)");
  if (o.model.num_attention_heads % o.model.num_key_value_heads != 0) {
    throw UsageError("--num-attention-heads must be a multiple of --num-key-value-heads");
  }
  check_spec(o.problems);
  return o;
}

ModelConfig arith_model_config(const ArithTaskOptions& options, int64_t vocab_size) {
  presets::Qwen3Shape shape = options.model;
  shape.vocab_size = vocab_size;
  shape.padded_vocab_size = pad_vocab_size(vocab_size, 128);
  return presets::qwen3_config(shape);
}

std::vector<std::string> write_tiny_model(const fs::path& model_dir, const ModelConfig& config,
                                          const ArithTokenizerFiles& tok, uint64_t seed,
                                          const std::function<void(Model&)>& edit) {
  std::error_code ec;
  fs::create_directories(model_dir, ec);
  if (ec) throw Error("cannot create " + model_dir.string() + ": " + ec.message());
  Model model(config, at::kFloat, at::kCPU, seed);
  if (edit) edit(model);
  ckpt::save_hf_model(model, model_dir, tok.vocab_size, at::kFloat);
  // save_hf_model writes the shape; HF's config also names the special token ids.
  Json hf = model.config().to_hf_json("float32");
  hf["bos_token_id"] = nullptr;
  hf["eos_token_id"] = tok.eos_token_id;
  hf["pad_token_id"] = tok.eos_token_id;
  write_text_file_atomic(model_dir / "config.json", hf.dump(2) + "\n");
  Json generation = Json::object();
  generation["eos_token_id"] = tok.eos_token_id;
  generation["pad_token_id"] = tok.eos_token_id;
  generation["do_sample"] = false;
  write_text_file_atomic(model_dir / "generation_config.json", generation.dump(2) + "\n");
  write_text_file_atomic(model_dir / "tokenizer.json", tok.tokenizer_json);
  write_text_file_atomic(model_dir / "tokenizer_config.json", tok.tokenizer_config_json);
  return {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
          "tokenizer_config.json"};
}

std::vector<std::string> write_arith_task(const ArithTaskOptions& options) {
  auto split = make_problems(options.problems);
  auto tok = make_arith_tokenizer();
  const fs::path model_dir = options.out / "model", data_dir = options.out / "data";
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) throw Error("cannot create " + options.out.string() + ": " + ec.message());
  write_tiny_model(model_dir, arith_model_config(options, tok.vocab_size), tok, options.model_seed);

  write_jsonl(data_dir / "train.jsonl", split.train, false);
  write_jsonl(data_dir / "sft.jsonl", split.train, true);
  write_jsonl(data_dir / "test.jsonl", split.test, false);
  return {"model/config.json",
          "model/model.safetensors",
          "model/generation_config.json",
          "model/tokenizer.json",
          "model/tokenizer_config.json",
          "data/train.jsonl",
          "data/sft.jsonl",
          "data/test.jsonl"};
}

}  // namespace vime::quickstart
