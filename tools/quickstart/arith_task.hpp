// The quickstart task directory: model/ (a tiny random-init Qwen3 in HF format with the arithmetic
// tokenizer) and data/ (train.jsonl, sft.jsonl, test.jsonl). make_arith_task is its command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "arith_problems.hpp"
#include "arith_tokenizer.hpp"
#include "common/model_presets.hpp"
#include "vime/model/model_config.hpp"

namespace vime {
class Model;
}

namespace vime::quickstart {

struct ArithTaskOptions {
  std::filesystem::path out;
  ArithSpec problems;
  // The vocabulary sizes come from the tokenizer (arith_model_config).
  presets::Qwen3Shape model{.hidden_size = 64,
                            .intermediate_size = 192,
                            .num_layers = 2,
                            .num_attention_heads = 4,
                            .num_key_value_heads = 2,
                            .head_dim = 16,
                            .rope_theta = 10000.0,
                            .max_position_embeddings = 512};
  uint64_t model_seed = 1234;
};

// The tiny Qwen3 config for `options` and a tokenizer of `vocab_size` tokens.
ModelConfig arith_model_config(const ArithTaskOptions& options, int64_t vocab_size);

// Writes a random-init model of `config` (seeded) with tokenizer `tok` into `model_dir`:
// config.json, model.safetensors, generation_config.json, tokenizer.json, tokenizer_config.json.
// `edit` may change the weights before they are saved. Returns the file names.
std::vector<std::string> write_tiny_model(const std::filesystem::path& model_dir,
                                          const ModelConfig& config, const ArithTokenizerFiles& tok,
                                          uint64_t seed,
                                          const std::function<void(Model&)>& edit = {});

// Writes every file (each atomically); returns their paths relative to options.out.
std::vector<std::string> write_arith_task(const ArithTaskOptions& options);

// Parses make_arith_task's flags; throws UsageError (exit 2) on a bad one. `help` is set by --help.
ArithTaskOptions parse_arith_task_flags(const std::vector<std::string>& argv, bool& help);
extern const char* const kArithTaskUsage;

}  // namespace vime::quickstart
