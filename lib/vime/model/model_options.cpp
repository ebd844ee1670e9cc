// Every flag the model area reads, in one place: the model's shape from flags (ModelConfig),
// the check of a checkpoint's config against the flags, and activation recompute.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/model/model_config.hpp"

namespace vime {
namespace {

// The MoE flags vime accepts only with some values; each refusal names the flag and why.
void check_moe_flags(const Args& args) {
  if (!args.has("num_experts") || !args.is_set("num_experts")) return;
  auto string_of = [&](const char* key) {
    return args.has(key) && args.is_set(key) ? args.get_string(key) : std::string();
  };
  const std::string score = string_of("moe_router_score_function");
  if (!score.empty() && score != "softmax" && score != "sigmoid") {
    throw UsageError("--moe-router-score-function " + score + ": expected softmax or sigmoid");
  }
  const bool expert_bias = args.get_bool("moe_router_enable_expert_bias");
  if (expert_bias && score != "sigmoid") {
    throw UsageError(
        "--moe-router-enable-expert-bias needs --moe-router-score-function sigmoid (the "
        "correction bias of DeepSeek-V3 and GLM-4.5 routing)");
  }
  if (expert_bias && args.get_double("moe_router_bias_update_rate") != 0.0) {
    throw UsageError(
        "--moe-router-bias-update-rate " + args.get("moe_router_bias_update_rate").dump() +
        " is not supported: vime keeps the routers' correction bias fixed (pass 0, as slime's "
        "presets do)");
  }
  const Json& balancing = args.get("moe_router_load_balancing_type");
  for (size_t i = 0; balancing.is_array() && i < balancing.size(); ++i) {
    const std::string type = balancing.at(i).as_string();
    const Json& coeff = args.get("moe_aux_loss_coeff");
    const bool no_loss =
        coeff.is_null() || (coeff.is_array() ? coeff.size() == 0 || coeff.at(0).as_double() == 0.0
                                             : coeff.as_double() == 0.0);
    if (type != "aux_loss" && type != "none" && !no_loss) {
      throw UsageError("--moe-router-load-balancing-type " + type +
                       " is not supported with a nonzero --moe-aux-loss-coeff; vime computes "
                       "aux_loss (Megatron's switch_load_balancing_loss_func)");
    }
  }
  if (auto d = string_of("moe_router_dtype"); !d.empty() && d != "fp32") {
    throw UsageError("--moe-router-dtype " + d +
                     " is not supported; vime's router takes the softmax in fp32 (as HF does)");
  }
  if (args.has("moe_token_dispatcher_type") &&
      args.source("moe_token_dispatcher_type") != ArgSource::kDefault) {
    if (auto t = string_of("moe_token_dispatcher_type"); t != "alltoall") {
      throw UsageError("--moe-token-dispatcher-type " + t +
                       " is not supported yet; vime dispatches tokens all-to-all (alltoall)");
    }
  }
  if (args.has("moe_aux_loss_coeff")) {
    const Json& coeff = args.get("moe_aux_loss_coeff");
    if (coeff.is_array() && coeff.size() > 1) {
      throw UsageError(
          "--moe-aux-loss-coeff takes one value in vime (one load-balancing type, aux_loss)");
    }
  }
}

// Megatron's sigmoid routing flags (DeepSeek-V3, GLM-4.5), after check_moe_flags.
void read_sigmoid_routing_flags(const Args& args, MoeConfig& m) {
  auto int_of = [&](const char* key, int64_t fallback) {
    return args.has(key) && args.is_set(key) ? args.get_int(key) : fallback;
  };
  if (args.is_set("moe_shared_expert_intermediate_size")) {
    m.shared_expert_intermediate_size = args.get_int("moe_shared_expert_intermediate_size");
    m.shared_expert_gated = args.get_bool("moe_shared_expert_gate");
  }
  if (args.get_string("moe_router_score_function") != "sigmoid") return;
  m.score_function = "sigmoid";
  // Megatron's sigmoid routing always divides the top-k scores by their sum (for k > 1),
  // whatever --moe-router-pre-softmax says.
  m.norm_topk_prob = m.num_experts_per_tok > 1;
  m.expert_bias = args.get_bool("moe_router_enable_expert_bias");
  m.n_group = int_of("moe_router_num_groups", 1);
  m.topk_group = int_of("moe_router_group_topk", 1);
  if (args.is_set("moe_router_topk_scaling_factor")) {
    m.routed_scaling_factor = args.get_double("moe_router_topk_scaling_factor");
  }
  if (m.n_group < 1 || m.num_experts % m.n_group != 0) {
    throw UsageError("--moe-router-num-groups " + std::to_string(m.n_group) +
                     ": must divide --num-experts " + std::to_string(m.num_experts));
  }
  if (m.topk_group < 1 || m.topk_group > m.n_group) {
    throw UsageError("--moe-router-group-topk " + std::to_string(m.topk_group) +
                     ": must be in [1, --moe-router-num-groups]");
  }
  if (m.n_group > 1 && m.num_experts / m.n_group < 2) {
    throw UsageError("--moe-router-num-groups " + std::to_string(m.n_group) +
                     ": group-limited routing needs at least 2 experts per group");
  }
}

// GLM-4's partial and interleaved rotary and extra norms (slime's glm4 spec flags).
void read_glm_flags(const Args& args, ModelConfig& c) {
  c.partial_rotary_factor = args.get_double("rotary_percent");
  c.rope_interleaved = args.get_bool("rotary_interleaved");
  const bool post_attn = args.get_bool("post_self_attn_layernorm"),
             post_mlp = args.get_bool("post_mlp_layernorm");
  if (post_attn != post_mlp) {
    throw UsageError(
        std::string(post_attn ? "--post-self-attn-layernorm" : "--post-mlp-layernorm") +
        " alone is not supported; GLM-4 has both norms");
  }
  c.post_sublayer_norms = post_attn;
  if (args.has("spec") && args.is_set("spec")) {
    const Json& spec = args.get("spec");
    const bool is_glm = spec.is_array() && spec.size() == 2 &&
                        spec.at(0).as_string() == "slime_plugins.models.glm4" &&
                        spec.at(1).as_string() == "get_glm_spec";
    if (!is_glm || !c.post_sublayer_norms) {
      throw UsageError("--spec " + spec.dump() +
                       " is not supported: vime builds its own layers and knows only slime's "
                       "GLM-4 spec (slime_plugins.models.glm4 get_glm_spec, with "
                       "--post-self-attn-layernorm --post-mlp-layernorm)");
    }
  }
  if (c.post_sublayer_norms) {
    if (!c.rope_interleaved) {
      throw UsageError(
          "--post-self-attn-layernorm (GLM-4) without --rotary-interleaved: GLM-4 rotates "
          "interleaved pairs");
    }
    c.model_type = "glm4";
  } else if (c.rope_interleaved) {
    throw UsageError(
        "--rotary-interleaved is GLM-4's (with --post-self-attn-layernorm --post-mlp-layernorm)");
  }
  const int64_t rotary = c.rotary_dim();
  if (c.partial_rotary_factor <= 0.0 || c.partial_rotary_factor > 1.0 || rotary % 2 != 0) {
    throw UsageError("--rotary-percent " + args.get("rotary_percent").dump() +
                     ": must give an even number of rotary channels in (0, head size]");
  }
}

double first_double(const Json& value) {
  if (value.is_null()) return 0.0;
  if (value.is_array()) return value.size() == 0 ? 0.0 : value.at(0).as_double();
  return value.as_double();
}

// One entry per layer, 1 where the layer is MoE.
std::vector<int64_t> moe_pattern(const ModelConfig& c) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < c.num_layers; ++i) out.push_back(c.is_moe_layer(i) ? 1 : 0);
  return out;
}

// --multi-latent-attention and its sizes (slime's scripts/models/deepseek-v3.sh, kimi-k2.sh,
// moonlight.sh). YaRN's context and ramp are Megatron's MLATransformerConfig defaults (original
// context 4096, beta_fast 32, beta_slow 1); a checkpoint's config.json says otherwise where it
// differs.
void read_mla_flags(const Args& args, ModelConfig& c) {
  auto& m = c.mla;
  m.q_lora_rank = args.is_set("q_lora_rank") ? args.get_int("q_lora_rank") : 0;
  m.kv_lora_rank = args.get_int("kv_lora_rank");
  m.qk_nope_head_dim = args.get_int("qk_head_dim");
  m.qk_rope_head_dim = args.get_int("qk_pos_emb_head_dim");
  m.v_head_dim = args.get_int("v_head_dim");
  if (m.kv_lora_rank <= 0 || m.qk_rope_head_dim <= 0 || m.qk_rope_head_dim % 2 != 0 ||
      m.v_head_dim <= 0 || m.qk_nope_head_dim < 0 || m.q_lora_rank < 0) {
    throw UsageError(
        "--multi-latent-attention: --kv-lora-rank, --qk-pos-emb-head-dim (even) and --v-head-dim "
        "must be positive");
  }
  c.model_type = "deepseek_v3";
  c.head_dim = m.qk_rope_head_dim;
  c.num_key_value_heads = c.num_attention_heads;
  c.qk_norm = false;  // --qk-layernorm names MLA's latent norms
  c.qkv_bias = false;
  if (const double factor = args.get_double("rotary_scaling_factor"); factor != 1.0) {
    auto& r = c.rope_scaling;
    r.type = "yarn";
    r.factor = factor;
    r.original_max_position_embeddings = 4096;
    r.mscale = args.get_double("mscale");
    r.mscale_all_dim = args.get_double("mscale_all_dim");
  }
}

// The MLA flags against a checkpoint's config.json.
void check_mla_agrees(const ModelConfig& c, const Args& args) {
  const bool flag = args.has("multi_latent_attention") && args.get_bool("multi_latent_attention");
  if (args.is_set("num_layers") && flag != c.is_mla()) {
    throw UsageError(
        std::string("--multi-latent-attention ") +
        (flag ? "is set but the checkpoint's config.json is a " + c.model_type + " model without it"
              : "is missing but the checkpoint's config.json is a deepseek_v3 model") +
        "; fix the model preset");
  }
  if (!flag || !c.is_mla()) return;
  auto check = [&](const char* key, int64_t expected) {
    const int64_t got = args.is_set(key) ? args.get_int(key) : 0;
    if (got != expected) {
      throw UsageError(args.flag_name(key) + " " + std::to_string(got) +
                       " disagrees with the checkpoint's config.json (" + std::to_string(expected) +
                       "); fix the flag or the model preset");
    }
  };
  check("q_lora_rank", c.mla.q_lora_rank);
  check("kv_lora_rank", c.mla.kv_lora_rank);
  check("qk_head_dim", c.mla.qk_nope_head_dim);
  check("qk_pos_emb_head_dim", c.mla.qk_rope_head_dim);
  check("v_head_dim", c.mla.v_head_dim);
  const double factor = args.get_double("rotary_scaling_factor");
  const double expected = c.rope_scaling.type == "yarn" ? c.rope_scaling.factor : 1.0;
  if (std::abs(factor - expected) > 1e-9 * std::max(1.0, expected)) {
    throw UsageError("--rotary-scaling-factor " + std::to_string(factor) +
                     " disagrees with the checkpoint's config.json (YaRN factor " +
                     std::to_string(expected) + "); fix the model preset");
  }
}

}  // namespace

std::vector<int64_t> parse_moe_layer_freq(const std::string& text, int64_t num_layers) {
  const std::string flag = "--moe-layer-freq " + text;
  std::string s;
  for (char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  auto bad = [&](const std::string& why) {
    return UsageError(flag + ": " + why +
                      " (an int N, or a list pattern such as [0]*1+[1]*47 or [1,1,0])");
  };
  if (s.empty()) throw bad("empty");
  std::vector<int64_t> out;
  if (s.find('[') == std::string::npos) {
    int64_t n = 0;
    try {
      size_t used = 0;
      n = std::stoll(s, &used);
      if (used != s.size()) throw bad("not an int");
    } catch (const std::logic_error&) {
      throw bad("not an int");
    }
    if (n < 1) throw bad("must be >= 1");
    for (int64_t i = 0; i < num_layers; ++i) out.push_back(i % n == 0 ? 1 : 0);
    return out;
  }
  while (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  size_t pos = 0;
  auto read_int = [&]() {
    size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (start == pos) throw bad("expected a number at \"" + s.substr(start) + "\"");
    return std::stoll(s.substr(start, pos - start));
  };
  while (pos < s.size()) {
    if (s[pos] != '[') throw bad("expected '[' at \"" + s.substr(pos) + "\"");
    ++pos;
    std::vector<int64_t> term;
    while (pos < s.size() && s[pos] != ']') {
      term.push_back(read_int());
      if (term.back() > 1) throw bad("entries must be 0 or 1");
      if (pos < s.size() && s[pos] == ',') ++pos;
    }
    if (pos >= s.size()) throw bad("missing ']'");
    ++pos;
    int64_t repeat = 1;
    if (pos < s.size() && s[pos] == '*') {
      ++pos;
      repeat = read_int();
    }
    for (int64_t r = 0; r < repeat; ++r) out.insert(out.end(), term.begin(), term.end());
    if (pos < s.size()) {
      if (s[pos] != '+') throw bad("expected '+' at \"" + s.substr(pos) + "\"");
      ++pos;
    }
  }
  if (static_cast<int64_t>(out.size()) != num_layers) {
    throw bad("has " + std::to_string(out.size()) + " entries for " + std::to_string(num_layers) +
              " layers");
  }
  return out;
}

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
  read_glm_flags(args, c);
  if (args.get_bool("multi_latent_attention")) read_mla_flags(args, c);
  if (args.has("num_experts") && args.is_set("num_experts")) {
    check_moe_flags(args);
    auto& m = c.moe;
    m.num_experts = args.get_int("num_experts");
    m.num_experts_per_tok = args.get_int("moe_router_topk");
    m.moe_intermediate_size = args.is_set("moe_ffn_hidden_size")
                                  ? args.get_int("moe_ffn_hidden_size")
                                  : c.intermediate_size;
    // Megatron's default (post-softmax) routing takes the softmax over the top-k logits, which
    // is HF's renormalised top-k; --moe-router-pre-softmax keeps the full softmax's values.
    m.norm_topk_prob = !args.get_bool("moe_router_pre_softmax");
    read_sigmoid_routing_flags(args, m);
    m.router_aux_loss_coef = first_double(args.get("moe_aux_loss_coeff"));
    const auto pattern = parse_moe_layer_freq(args.get_string("moe_layer_freq"), c.num_layers);
    for (int64_t i = 0; i < c.num_layers; ++i)
      if (pattern[i] == 0) m.mlp_only_layers.push_back(i);
    if (m.num_experts < 1 || m.num_experts_per_tok < 1 || m.num_experts_per_tok > m.num_experts) {
      throw UsageError("--moe-router-topk " + std::to_string(m.num_experts_per_tok) +
                       ": must be in [1, --num-experts]");
    }
    if (c.is_mla() && m.score_function != "sigmoid") {
      throw UsageError(
          "--num-experts with --multi-latent-attention: DeepSeek-V3's experts route with "
          "--moe-router-score-function sigmoid");
    }
    if (m.score_function == "sigmoid") {
      // DeepSeek-V3 (MLA) or GLM-4.5 (standard attention), both with sigmoid-routed experts.
      c.model_type = c.is_mla() ? "deepseek_v3" : "glm4_moe";
      // HF's first_k_dense_replace: the dense layers must come first.
      const auto first_moe = std::find(pattern.begin(), pattern.end(), 1);
      if (std::find(first_moe, pattern.end(), 0) != pattern.end()) {
        throw UsageError("--moe-layer-freq " + args.get_string("moe_layer_freq") +
                         ": with sigmoid routing the dense layers must come first (HF "
                         "first_k_dense_replace), as [0]*K+[1]*N");
      }
      m.first_k_dense_replace = first_moe - pattern.begin();
      m.mlp_only_layers.clear();
      if (c.rope_interleaved || c.post_sublayer_norms) {
        throw UsageError(
            "--num-experts with --rotary-interleaved or --post-self-attn-layernorm: vime's "
            "sigmoid-routed MoE model is GLM-4.5's, which rotates halves and has no extra norms");
      }
    } else if (c.post_sublayer_norms) {
      throw UsageError(
          "--num-experts with --post-self-attn-layernorm: vime's GLM-4 (dense) has no experts; "
          "GLM-4.5 routes with --moe-router-score-function sigmoid");
    } else if (!m.shared_expert_gated) {
      throw UsageError(
          "--moe-shared-expert-intermediate-size without --moe-shared-expert-gate: vime's "
          "ungated shared experts are DeepSeek-V3's and GLM-4.5's, routed with "
          "--moe-router-score-function sigmoid");
    } else if (c.qk_norm && m.shared_expert_intermediate_size == 0) {
      c.model_type = "qwen3_moe";
    } else if (!c.qk_norm && c.qkv_bias && m.shared_expert_intermediate_size > 0) {
      c.model_type = "qwen2_moe";
    } else {
      throw UsageError(
          "--num-experts: vime's MoE models are Qwen3-MoE (--qk-layernorm, no shared expert) and "
          "Qwen2-MoE (--add-qkv-bias with --moe-shared-expert-intermediate-size)");
    }
  }
  if (c.model_type != "glm4" && c.model_type != "glm4_moe" && c.partial_rotary_factor != 1.0) {
    throw UsageError("--rotary-percent " + args.get("rotary_percent").dump() +
                     ": partial rotary is GLM-4's (with --post-self-attn-layernorm "
                     "--post-mlp-layernorm) and GLM-4.5's (with sigmoid-routed experts)");
  }
  c.padded_vocab_size =
      args.is_set("padded_vocab_size")
          ? args.get_int("padded_vocab_size")
          : pad_vocab_size(c.vocab_size, args.get_int("make_vocab_size_divisible_by"));
  return c;
}

void ModelConfig::check_agrees_with_args(const Args& args) const {
  check_mla_agrees(*this, args);
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
  if (!is_mla()) check("kv_channels", head_dim);  // Megatron's MLA ignores --kv-channels
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
    if (!is_mla()) check_bool("qk_layernorm", qk_norm);
    check_bool("untie_embeddings_and_output_weights", !tie_word_embeddings);
    check_bool("rotary_interleaved", rope_interleaved);
    check_bool("post_self_attn_layernorm", post_sublayer_norms);
    check_bool("post_mlp_layernorm", post_sublayer_norms);
    if (args.has("rotary_percent") && args.get_double("rotary_percent") != partial_rotary_factor) {
      throw UsageError("--rotary-percent " + args.get("rotary_percent").dump() +
                       " disagrees with the checkpoint's config.json (partial_rotary_factor " +
                       Json(partial_rotary_factor).dump() + "); fix the model preset");
    }
  }
  const bool flags_moe = args.has("num_experts") && args.is_set("num_experts");
  if (args.is_set("num_layers") && is_moe() && !flags_moe) {
    throw UsageError("--num-experts is missing but the checkpoint's config.json is a " +
                     model_type + " model; fix the model preset");
  }
  if (!flags_moe) return;
  check_moe_flags(args);
  if (!is_moe()) {
    throw UsageError("--num-experts is set but the checkpoint's config.json is a dense " +
                     model_type + " model; fix the model preset");
  }
  check("num_experts", moe.num_experts);
  check("moe_router_topk", moe.num_experts_per_tok);
  check("moe_ffn_hidden_size", moe.moe_intermediate_size);
  check("moe_shared_expert_intermediate_size", moe.shared_expert_intermediate_size);
  if (moe.score_function == "softmax") check_bool("moe_router_pre_softmax", !moe.norm_topk_prob);
  const std::string score = args.is_set("moe_router_score_function")
                                ? args.get_string("moe_router_score_function")
                                : "softmax";
  if (score != moe.score_function) {
    throw UsageError("--moe-router-score-function " + score +
                     " disagrees with the checkpoint's config.json (" + moe.score_function +
                     " routing); fix the model preset");
  }
  if (moe.score_function == "sigmoid") {
    check("moe_router_num_groups", moe.n_group);
    check("moe_router_group_topk", moe.topk_group);
    if (args.is_set("moe_router_topk_scaling_factor") &&
        args.get_double("moe_router_topk_scaling_factor") != moe.routed_scaling_factor) {
      throw UsageError("--moe-router-topk-scaling-factor " +
                       args.get("moe_router_topk_scaling_factor").dump() +
                       " disagrees with the checkpoint's config.json (routed_scaling_factor " +
                       Json(moe.routed_scaling_factor).dump() + "); fix the model preset");
    }
    check_bool("moe_router_enable_expert_bias", moe.expert_bias);
  }
  if (parse_moe_layer_freq(args.get_string("moe_layer_freq"), num_layers) != moe_pattern(*this)) {
    throw UsageError("--moe-layer-freq " + args.get_string("moe_layer_freq") +
                     " disagrees with the checkpoint's config.json (decoder_sparse_step, "
                     "mlp_only_layers); fix the model preset");
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
