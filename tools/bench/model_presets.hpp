// The model shapes the benchmarks run on random weights (vime_bench_train, engine_bench).
#pragma once

#include <stdexcept>
#include <string>

#include "vime/model/model_config.hpp"

namespace vime::bench {

// qwen3-0.6b, qwen3-4b (HF Qwen3 configs) or tiny (a CPU-sized Qwen3).
inline vime::ModelConfig preset(const std::string& name) {
  vime::ModelConfig c;
  c.model_type = "qwen3";
  c.qk_norm = true;
  c.tie_word_embeddings = true;
  c.rope_theta = 1000000.0;
  c.rms_norm_eps = 1e-6;
  c.vocab_size = c.padded_vocab_size = 151936;
  c.head_dim = 128;
  c.num_key_value_heads = 8;
  if (name == "qwen3-0.6b") {
    c.hidden_size = 1024, c.intermediate_size = 3072, c.num_layers = 28, c.num_attention_heads = 16;
  } else if (name == "qwen3-4b") {
    c.hidden_size = 2560, c.intermediate_size = 9728, c.num_layers = 36, c.num_attention_heads = 32;
  } else if (name == "tiny") {
    c.vocab_size = c.padded_vocab_size = 512;
    c.hidden_size = 64, c.intermediate_size = 128, c.num_layers = 2, c.num_attention_heads = 4;
    c.num_key_value_heads = 2, c.head_dim = 16;
  } else {
    throw std::runtime_error("unknown --model " + name);
  }
  return c;
}

}  // namespace vime::bench
