// The quickstart task directory: model/ (a tiny random-init Qwen3 in HF format with the arithmetic
// tokenizer) and data/ (train.jsonl, sft.jsonl, test.jsonl). make_arith_task is its command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arith_problems.hpp"
#include "vime/model/model_config.hpp"

namespace vime::quickstart {

struct ArithTaskOptions {
  std::filesystem::path out;
  ArithSpec problems;
  int64_t hidden_size = 128;
  int64_t num_layers = 4;
  int64_t num_attention_heads = 4;
  int64_t num_key_value_heads = 2;
  int64_t head_dim = 32;
  int64_t intermediate_size = 384;
  uint64_t model_seed = 1234;
};

// The tiny Qwen3 config for `options` and a tokenizer of `vocab_size` tokens.
ModelConfig arith_model_config(const ArithTaskOptions& options, int64_t vocab_size);

// Writes every file (each atomically); returns their paths relative to options.out.
std::vector<std::string> write_arith_task(const ArithTaskOptions& options);

// Parses make_arith_task's flags; throws UsageError (exit 2) on a bad one. `help` is set by --help.
ArithTaskOptions parse_arith_task_flags(const std::vector<std::string>& argv, bool& help);
extern const char* const kArithTaskUsage;

}  // namespace vime::quickstart
