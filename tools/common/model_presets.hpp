// The Qwen3 shapes that tests and tools build random-init models from, spelled once: the benchmark
// presets (real Qwen3 sizes), the tiny CPU shapes of the tests, and qwen3_config() under all of
// them and the quickstart's task model. Numbers here feed golden tests: change none in place, add a
// variant instead.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "vime/model/model_config.hpp"

namespace vime::presets {

// A Qwen3 (q/k norms, grouped-query attention) of these sizes; what is not named here keeps
// ModelConfig's default (rms_norm_eps 1e-6, no biases).
struct Qwen3Shape {
  int64_t vocab_size = 0;
  int64_t padded_vocab_size = 0;  // 0: vocab_size
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  double rope_theta = 1000000.0;  // Qwen3's
  bool tie_word_embeddings = true;
  int64_t max_position_embeddings = 32768;
};

inline ModelConfig qwen3_config(const Qwen3Shape& shape) {
  ModelConfig c;
  c.model_type = "qwen3";
  c.qk_norm = true;
  c.vocab_size = shape.vocab_size;
  c.padded_vocab_size = shape.padded_vocab_size > 0 ? shape.padded_vocab_size : shape.vocab_size;
  c.hidden_size = shape.hidden_size;
  c.intermediate_size = shape.intermediate_size;
  c.num_layers = shape.num_layers;
  c.num_attention_heads = shape.num_attention_heads;
  c.num_key_value_heads = shape.num_key_value_heads;
  c.head_dim = shape.head_dim;
  c.rope_theta = shape.rope_theta;
  c.tie_word_embeddings = shape.tie_word_embeddings;
  c.max_position_embeddings = shape.max_position_embeddings;
  return c;
}

inline constexpr int64_t kQwen3VocabSize = 151936;

// HF's Qwen/Qwen3-0.6B and Qwen/Qwen3-4B shapes.
inline ModelConfig qwen3_0_6b() {
  return qwen3_config({.vocab_size = kQwen3VocabSize,
                       .hidden_size = 1024,
                       .intermediate_size = 3072,
                       .num_layers = 28,
                       .num_attention_heads = 16,
                       .num_key_value_heads = 8,
                       .head_dim = 128});
}
inline ModelConfig qwen3_4b() {
  return qwen3_config({.vocab_size = kQwen3VocabSize,
                       .hidden_size = 2560,
                       .intermediate_size = 9728,
                       .num_layers = 36,
                       .num_attention_heads = 32,
                       .num_key_value_heads = 8,
                       .head_dim = 128});
}

// HF's Qwen/Qwen3-8B and Qwen/Qwen3-14B (untied output layers).
inline ModelConfig qwen3_8b() {
  return qwen3_config({.vocab_size = kQwen3VocabSize,
                       .hidden_size = 4096,
                       .intermediate_size = 12288,
                       .num_layers = 36,
                       .num_attention_heads = 32,
                       .num_key_value_heads = 8,
                       .head_dim = 128,
                       .tie_word_embeddings = false});
}
inline ModelConfig qwen3_14b() {
  return qwen3_config({.vocab_size = kQwen3VocabSize,
                       .hidden_size = 5120,
                       .intermediate_size = 17408,
                       .num_layers = 40,
                       .num_attention_heads = 40,
                       .num_key_value_heads = 8,
                       .head_dim = 128,
                       .tie_word_embeddings = false});
}

// A CPU-sized Qwen3: 2 layers, hidden 64, 4 heads / 2 KV heads of 16, a 512-token vocabulary.
inline ModelConfig tiny_qwen3() {
  return qwen3_config({.vocab_size = 512,
                       .hidden_size = 64,
                       .intermediate_size = 128,
                       .num_layers = 2,
                       .num_attention_heads = 4,
                       .num_key_value_heads = 2,
                       .head_dim = 16});
}

// tiny_qwen3 with Qwen3's real vocabulary (so text decodes with the real tokenizer) and an untied
// output layer: the NativeEngine and `vime serve` tests.
inline ModelConfig tiny_qwen3_real_vocab(int64_t max_position_embeddings) {
  ModelConfig c = tiny_qwen3();
  c.vocab_size = c.padded_vocab_size = kQwen3VocabSize;
  c.tie_word_embeddings = false;
  c.max_position_embeddings = max_position_embeddings;
  return c;
}

// Smaller still, for trainer tests that take many optimizer steps: hidden 32, heads of 8, a
// 40-token vocabulary padded to 64, rope_theta 1e4.
inline ModelConfig micro_qwen3() {
  return qwen3_config({.vocab_size = 40,
                       .padded_vocab_size = 64,
                       .hidden_size = 32,
                       .intermediate_size = 64,
                       .num_layers = 2,
                       .num_attention_heads = 4,
                       .num_key_value_heads = 2,
                       .head_dim = 8,
                       .rope_theta = 10000.0});
}

// The benchmarks' --model: qwen3-0.6b, qwen3-4b, qwen3-8b, qwen3-14b or tiny.
inline ModelConfig by_name(const std::string& name) {
  if (name == "qwen3-0.6b") return qwen3_0_6b();
  if (name == "qwen3-4b") return qwen3_4b();
  if (name == "qwen3-8b") return qwen3_8b();
  if (name == "qwen3-14b") return qwen3_14b();
  if (name == "tiny") return tiny_qwen3();
  throw std::runtime_error("unknown --model " + name);
}

}  // namespace vime::presets
