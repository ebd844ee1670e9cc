// Every flag the model area reads, in one place: the model's shape from flags (ModelConfig),
// the check of a checkpoint's config against the flags, and activation recompute.
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/model/model_config.hpp"

namespace vime {

ModelConfig ModelConfig::from(const Args& args) {
  auto need = [&](const char* key) {
    if (!args.is_set(key)) {
      throw UsageError(args.flag_name(key) +
                       " is required to build the model without an HF config.json");
    }
    return args.get_int(key);
  };
  ModelConfig c;
  c.num_layers = need("num_layers");
  c.hidden_size = need("hidden_size");
  c.num_attention_heads = need("num_attention_heads");
  c.vocab_size = need("vocab_size");
  c.intermediate_size =
      args.is_set("ffn_hidden_size") ? args.get_int("ffn_hidden_size") : 4 * c.hidden_size;
  c.head_dim = args.is_set("kv_channels") ? args.get_int("kv_channels")
                                          : c.hidden_size / c.num_attention_heads;
  c.num_key_value_heads = args.get_bool("group_query_attention") ? args.get_int("num_query_groups")
                                                                 : c.num_attention_heads;
  c.rms_norm_eps = args.get_double("norm_epsilon");
  c.rope_theta = static_cast<double>(args.get_int("rotary_base"));
  c.tie_word_embeddings = !args.get_bool("untie_embeddings_and_output_weights");
  c.qkv_bias = args.get_bool("add_qkv_bias");
  c.qk_norm = args.get_bool("qk_layernorm");
  c.model_type = c.qk_norm ? "qwen3" : c.qkv_bias ? "qwen2" : "llama";
  if (args.get_bool("use_rope_scaling")) {
    c.rope_scaling.type = "llama3";
    c.rope_scaling.factor = args.get_double("rope_scaling_factor");
  }
  c.padded_vocab_size =
      args.is_set("padded_vocab_size")
          ? args.get_int("padded_vocab_size")
          : pad_vocab_size(c.vocab_size, args.get_int("make_vocab_size_divisible_by"));
  return c;
}

void ModelConfig::check_agrees_with_args(const Args& args) const {
  auto check = [&](const char* key, int64_t expected) {
    if (args.has(key) && args.is_set(key) && args.get_int(key) != expected) {
      throw UsageError(args.flag_name(key) + " " + std::to_string(args.get_int(key)) +
                       " disagrees with the checkpoint's config.json (" + std::to_string(expected) +
                       "); fix the flag or the model preset");
    }
  };
  check("num_layers", num_layers);
  check("hidden_size", hidden_size);
  check("ffn_hidden_size", intermediate_size);
  check("num_attention_heads", num_attention_heads);
  check("kv_channels", head_dim);
  if (args.has("group_query_attention") && args.get_bool("group_query_attention")) {
    check("num_query_groups", num_key_value_heads);
  }
  check("vocab_size", vocab_size);
  auto check_bool = [&](const char* key, bool expected) {
    if (args.has(key) && args.get_bool(key) != expected) {
      throw UsageError(args.flag_name(key) + (expected ? " is missing" : " is set") +
                       " but the checkpoint's config.json says otherwise; fix the model preset");
    }
  };
  if (args.is_set("num_layers")) {  // only when a MODEL_ARGS preset was passed
    check_bool("qk_layernorm", qk_norm);
    check_bool("untie_embeddings_and_output_weights", !tie_word_embeddings);
  }
}

RecomputeOptions RecomputeOptions::from(const Args& args) {
  RecomputeOptions options;
  if (!args.is_set("recompute_granularity")) {
    if (args.get_bool("recompute_activations")) {
      throw UsageError(
          "--recompute-activations (selective recompute) is not supported; use "
          "--recompute-granularity full");
    }
    return options;
  }
  const std::string granularity = args.get_string("recompute_granularity");
  if (granularity != "full") {
    throw UsageError("--recompute-granularity " + granularity +
                     " is not supported; vime recomputes whole layers (full)");
  }
  options.enabled = true;
  const bool is_block =
      args.is_set("recompute_method") && args.get_string("recompute_method") == "block";
  if (is_block) options.num_layers = args.get_optional_int("recompute_num_layers").value_or(0);
  return options;
}

}  // namespace vime
