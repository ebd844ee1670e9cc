#include "vime/model/model_config.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "vime/error.hpp"

namespace vime {
namespace {

int64_t require_int(const Json& config, const char* key, const std::string& where) {
  const Json* v = config.find(key);
  if (v == nullptr || v->is_null()) {
    throw Error(where + ": missing \"" + key + "\" (an HF config.json of a Llama/Qwen model)");
  }
  return v->as_int();
}

int64_t int_or(const Json& config, const char* key, int64_t fallback) {
  const Json* v = config.find(key);
  return v == nullptr || v->is_null() ? fallback : v->as_int();
}

double double_or(const Json& config, const char* key, double fallback) {
  const Json* v = config.find(key);
  return v == nullptr || v->is_null() ? fallback : v->as_double();
}

bool bool_or(const Json& config, const char* key, bool fallback) {
  const Json* v = config.find(key);
  return v == nullptr || v->is_null() ? fallback : v->as_bool();
}

std::string model_type_of(const Json& config, const std::string& where) {
  std::string type = config.contains("model_type") ? config.at("model_type").as_string() : "";
  if (type.empty() && config.contains("architectures") && config.at("architectures").size() > 0) {
    std::string arch = config.at("architectures").at(0).as_string();
    if (arch.starts_with("Qwen3")) type = arch.starts_with("Qwen3Moe") ? "qwen3_moe" : "qwen3";
    if (arch.starts_with("Qwen2")) type = arch.starts_with("Qwen2Moe") ? "qwen2_moe" : "qwen2";
    if (arch.starts_with("Llama")) type = "llama";
    // GLM-4
    if (arch.starts_with("Glm4")) type = arch.starts_with("Glm4Moe") ? "glm4_moe" : "glm4";
  }
  // Kimi-K2 names its own model_type but is DeepseekV3ForCausalLM.
  if (type == "kimi_k2" && config.contains("architectures") &&
      config.at("architectures").size() > 0 &&
      config.at("architectures").at(0).as_string() == "DeepseekV3ForCausalLM") {
    type = "deepseek_v3";
  }
  if (type != "qwen3" && type != "qwen2" && type != "llama" && type != "qwen3_moe" &&
      type != "qwen2_moe" && type != "glm4" && type != "glm4_moe" && type != "deepseek_v3") {
    throw Error(where + ": model_type \"" + type +
                "\" is not supported (vime runs llama, qwen2, qwen3, qwen2_moe, qwen3_moe, glm4, "
                "glm4_moe and deepseek_v3 models)");
  }
  return type;
}

const char* architecture_of(const std::string& model_type) {
  if (model_type == "qwen3") return "Qwen3ForCausalLM";
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  if (model_type == "qwen3_moe") return "Qwen3MoeForCausalLM";
  if (model_type == "qwen2_moe") return "Qwen2MoeForCausalLM";
  if (model_type == "deepseek_v3") return "DeepseekV3ForCausalLM";
  if (model_type == "glm4") return "Glm4ForCausalLM";
  if (model_type == "glm4_moe") return "Glm4MoeForCausalLM";
  return "LlamaForCausalLM";
}

// DeepseekV3Config's attention (MLA); head_dim becomes the RoPE part, as HF sets it.
void read_mla(const Json& config, const std::string& where, ModelConfig& c) {
  auto& m = c.mla;
  m.q_lora_rank = int_or(config, "q_lora_rank", 0);  // null: one q_proj
  m.kv_lora_rank = require_int(config, "kv_lora_rank", where);
  m.qk_nope_head_dim = require_int(config, "qk_nope_head_dim", where);
  m.qk_rope_head_dim = require_int(config, "qk_rope_head_dim", where);
  m.v_head_dim = require_int(config, "v_head_dim", where);
  m.rope_interleave = bool_or(config, "rope_interleave", true);
  m.num_nextn_predict_layers = int_or(config, "num_nextn_predict_layers", 0);
  if (m.kv_lora_rank <= 0 || m.qk_rope_head_dim <= 0 || m.qk_rope_head_dim % 2 != 0 ||
      m.qk_nope_head_dim < 0 || m.v_head_dim <= 0 || m.q_lora_rank < 0) {
    throw Error(where + ": kv_lora_rank, qk_rope_head_dim (even) and v_head_dim must be positive");
  }
  c.head_dim = m.qk_rope_head_dim;
  c.num_key_value_heads = c.num_attention_heads;
  c.qk_norm = false;
  if (bool_or(config, "attention_bias", false)) {
    throw Error(where + ": attention_bias is not supported for deepseek_v3");
  }
  c.qkv_bias = false;
  // Routed experts (n_routed_experts, sigmoid routing) from first_k_dense_replace on.
  const int64_t experts = int_or(config, "n_routed_experts", 0);
  const int64_t first_dense = int_or(config, "first_k_dense_replace", 0);
  if (experts > 0 && first_dense < c.num_layers) c.moe = sigmoid_moe_from_hf_json(config, where);
}

double yarn_get_mscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

void read_moe(const Json& config, const std::string& where, ModelConfig& c) {
  auto& m = c.moe;
  // transformers 5's Qwen3MoeConfig writes num_local_experts (num_experts is its alias); the
  // Hub's checkpoints and Qwen2-MoE say num_experts.
  m.num_experts = config.contains("num_experts") || !config.contains("num_local_experts")
                      ? require_int(config, "num_experts", where)
                      : require_int(config, "num_local_experts", where);
  m.num_experts_per_tok = require_int(config, "num_experts_per_tok", where);
  m.moe_intermediate_size = require_int(config, "moe_intermediate_size", where);
  m.norm_topk_prob = bool_or(config, "norm_topk_prob", false);  // HF's default for both
  m.decoder_sparse_step = int_or(config, "decoder_sparse_step", 1);
  m.router_aux_loss_coef = double_or(config, "router_aux_loss_coef", 0.001);
  const Json* only = config.find("mlp_only_layers");
  if (only != nullptr && !only->is_null()) {
    for (size_t i = 0; i < only->size(); ++i) m.mlp_only_layers.push_back(only->at(i).as_int());
  }
  if (c.model_type == "qwen2_moe") {
    m.shared_expert_intermediate_size =
        require_int(config, "shared_expert_intermediate_size", where);
  }
  if (m.num_experts <= 0 || m.num_experts_per_tok <= 0 || m.num_experts_per_tok > m.num_experts) {
    throw Error(where + ": num_experts_per_tok must be in [1, num_experts]");
  }
  if (m.decoder_sparse_step <= 0) throw Error(where + ": decoder_sparse_step must be >= 1");
}

// GLM-4 (Glm4Config) and GLM-4.5 (Glm4MoeConfig): partial rotary; GLM-4's interleaved rotary and
// extra norms; GLM-4.5's optional QK norm and sigmoid-routed experts. rope_parameters (transformers
// 5) may hold partial_rotary_factor.
void read_glm4(const Json& config, const std::string& where, ModelConfig& c) {
  c.partial_rotary_factor = double_or(config, "partial_rotary_factor", 0.5);
  const Json* rope = config.find("rope_parameters");
  if (rope != nullptr && rope->is_object()) {
    c.partial_rotary_factor = double_or(*rope, "partial_rotary_factor", c.partial_rotary_factor);
  }
  if (c.model_type == "glm4") {
    c.rope_interleaved = true;
    c.post_sublayer_norms = true;
    c.qkv_bias = bool_or(config, "attention_bias", true);
  } else {
    c.qk_norm = bool_or(config, "use_qk_norm", false);
    c.moe = sigmoid_moe_from_hf_json(config, where);
  }
  const int64_t rotary = c.rotary_dim();
  if (rotary <= 0 || rotary % 2 != 0 || rotary > c.head_dim) {
    throw Error(where + ": partial_rotary_factor " + Json(c.partial_rotary_factor).dump() +
                " does not give an even number of rotary channels of head_dim " +
                std::to_string(c.head_dim));
  }
}

void write_glm4(const ModelConfig& c, Json& j) {
  j["partial_rotary_factor"] = c.partial_rotary_factor;
  if (c.model_type == "glm4_moe") {
    j["use_qk_norm"] = c.qk_norm;
    write_sigmoid_moe_hf_json(c.moe, j);
  }
}

}  // namespace

MoeConfig sigmoid_moe_from_hf_json(const Json& config, const std::string& where) {
  MoeConfig m;
  m.num_experts = require_int(config, "n_routed_experts", where);
  m.num_experts_per_tok = require_int(config, "num_experts_per_tok", where);
  m.moe_intermediate_size = require_int(config, "moe_intermediate_size", where);
  m.score_function = "sigmoid";
  m.expert_bias = true;  // HF registers e_score_correction_bias in every router
  // Keys left out take Glm4MoeConfig's defaults (DeepSeek-V3's checkpoints write every key).
  m.norm_topk_prob = bool_or(config, "norm_topk_prob", true);
  m.n_group = int_or(config, "n_group", 1);
  m.topk_group = int_or(config, "topk_group", 1);
  m.routed_scaling_factor = double_or(config, "routed_scaling_factor", 1.0);
  m.first_k_dense_replace = int_or(config, "first_k_dense_replace", 1);
  m.router_aux_loss_coef = 0.0;
  const int64_t shared = int_or(config, "n_shared_experts", 1);
  m.shared_expert_intermediate_size = shared * m.moe_intermediate_size;
  m.shared_expert_gated = false;
  if (m.num_experts <= 0 || m.num_experts_per_tok <= 0 || m.num_experts_per_tok > m.num_experts) {
    throw Error(where + ": num_experts_per_tok must be in [1, n_routed_experts]");
  }
  if (m.n_group < 1 || m.num_experts % m.n_group != 0 || m.topk_group < 1 ||
      m.topk_group > m.n_group) {
    throw Error(where + ": n_group must divide n_routed_experts and topk_group be in [1, n_group]");
  }
  if (m.n_group > 1 && m.num_experts / m.n_group < 2) {
    throw Error(where + ": group-limited routing needs at least 2 experts per group (n_group " +
                std::to_string(m.n_group) + ")");
  }
  if (shared < 0 || m.first_k_dense_replace < 0) {
    throw Error(where + ": n_shared_experts and first_k_dense_replace must be >= 0");
  }
  return m;
}

void write_sigmoid_moe_hf_json(const MoeConfig& moe, Json& out) {
  out["n_routed_experts"] = moe.num_experts;
  out["num_experts_per_tok"] = moe.num_experts_per_tok;
  out["moe_intermediate_size"] = moe.moe_intermediate_size;
  out["n_shared_experts"] = moe.moe_intermediate_size > 0
                                ? moe.shared_expert_intermediate_size / moe.moe_intermediate_size
                                : 0;
  out["n_group"] = moe.n_group;
  out["topk_group"] = moe.topk_group;
  out["routed_scaling_factor"] = moe.routed_scaling_factor;
  out["norm_topk_prob"] = moe.norm_topk_prob;
  out["first_k_dense_replace"] = moe.first_k_dense_replace;
}

int64_t pad_vocab_size(int64_t vocab_size, int64_t divisible_by) {
  if (divisible_by <= 1) return vocab_size;
  return (vocab_size + divisible_by - 1) / divisible_by * divisible_by;
}

ModelConfig ModelConfig::from_hf_json(const Json& config, const std::string& where) {
  if (!config.is_object()) throw Error(where + ": expected a JSON object");
  ModelConfig c;
  try {
    c.model_type = model_type_of(config, where);
    c.vocab_size = require_int(config, "vocab_size", where);
    c.padded_vocab_size = pad_vocab_size(c.vocab_size, 128);
    c.hidden_size = require_int(config, "hidden_size", where);
    c.intermediate_size = require_int(config, "intermediate_size", where);
    c.num_layers = require_int(config, "num_hidden_layers", where);
    c.num_attention_heads = require_int(config, "num_attention_heads", where);
    c.num_key_value_heads = int_or(config, "num_key_value_heads", c.num_attention_heads);
    c.head_dim = int_or(config, "head_dim", c.hidden_size / c.num_attention_heads);
    c.rms_norm_eps = double_or(config, "rms_norm_eps", 1e-6);
    c.max_position_embeddings = int_or(config, "max_position_embeddings", 32768);
    c.tie_word_embeddings = bool_or(config, "tie_word_embeddings", false);
    c.qk_norm = c.model_type == "qwen3" || c.model_type == "qwen3_moe";
    c.qkv_bias = c.model_type == "qwen2" || c.model_type == "qwen2_moe"
                     ? true
                     : bool_or(config, "attention_bias", false);
    if (c.model_type == "qwen3_moe" || c.model_type == "qwen2_moe") read_moe(config, where, c);
    if (c.model_type == "glm4" || c.model_type == "glm4_moe") read_glm4(config, where, c);
    if (c.model_type == "deepseek_v3") read_mla(config, where, c);
    // transformers 5 moves rope_theta and rope_scaling into rope_parameters.
    const Json* rope = config.find("rope_parameters");
    if (rope == nullptr || rope->is_null()) rope = config.find("rope_scaling");
    c.rope_theta = double_or(config, "rope_theta", 10000.0);
    if (rope != nullptr && rope->is_object()) {
      c.rope_theta = double_or(*rope, "rope_theta", c.rope_theta);
      std::string type = rope->contains("rope_type") ? rope->at("rope_type").as_string()
                         : rope->contains("type")    ? rope->at("type").as_string()
                                                     : "default";
      if (type != "default" && type != "llama3" && type != "yarn") {
        throw Error(where + ": rope type \"" + type +
                    "\" is not supported (default, llama3 or yarn)");
      }
      c.rope_scaling.type = type;
      if (type == "yarn") {
        auto& s = c.rope_scaling;
        s.original_max_position_embeddings =
            int_or(*rope, "original_max_position_embeddings", c.max_position_embeddings);
        // HF: without a factor, the ratio of the context lengths.
        s.factor = double_or(
            *rope, "factor",
            double(c.max_position_embeddings) / double(s.original_max_position_embeddings));
        s.beta_fast = double_or(*rope, "beta_fast", 32.0);
        s.beta_slow = double_or(*rope, "beta_slow", 1.0);
        s.mscale = double_or(*rope, "mscale", 0.0);
        s.mscale_all_dim = double_or(*rope, "mscale_all_dim", 0.0);
        s.attention_factor = double_or(*rope, "attention_factor", 0.0);
        s.truncate = bool_or(*rope, "truncate", true);
      }
      if (type == "llama3") {
        c.rope_scaling.factor = double_or(*rope, "factor", 8.0);
        c.rope_scaling.low_freq_factor = double_or(*rope, "low_freq_factor", 1.0);
        c.rope_scaling.high_freq_factor = double_or(*rope, "high_freq_factor", 4.0);
        c.rope_scaling.original_max_position_embeddings =
            int_or(*rope, "original_max_position_embeddings", 8192);
      }
    }
    if (config.contains("mlp_bias") && bool_or(config, "mlp_bias", false)) {
      throw Error(where + ": mlp_bias is not supported");
    }
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.starts_with(where)) throw;
    throw Error(where + ": " + msg);
  }
  if (c.num_attention_heads <= 0 || c.num_key_value_heads <= 0 ||
      c.num_attention_heads % c.num_key_value_heads != 0) {
    throw Error(where + ": num_attention_heads must be a multiple of num_key_value_heads");
  }
  return c;
}

ModelConfig ModelConfig::from_hf_dir(const std::filesystem::path& dir) {
  auto path = dir / "config.json";
  std::ifstream in(path);
  if (!in) {
    throw Error(path.string() + ": cannot read (an HF model directory holds config.json)");
  }
  std::stringstream text;
  text << in.rdbuf();
  return from_hf_json(Json::parse(text.str(), path.string()), path.string());
}

Json ModelConfig::to_hf_json(const std::string& torch_dtype) const {
  Json j = Json::object();
  j["architectures"] = Json(Json::Array{Json(architecture_of(model_type))});
  j["model_type"] = model_type;
  j["vocab_size"] = vocab_size;
  j["hidden_size"] = hidden_size;
  j["intermediate_size"] = intermediate_size;
  j["num_hidden_layers"] = num_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["num_key_value_heads"] = num_key_value_heads;
  if (!is_mla()) j["head_dim"] = head_dim;  // DeepseekV3Config derives it
  j["rms_norm_eps"] = rms_norm_eps;
  j["rope_theta"] = rope_theta;
  j["max_position_embeddings"] = max_position_embeddings;
  j["tie_word_embeddings"] = tie_word_embeddings;
  j["hidden_act"] = "silu";
  j["torch_dtype"] = torch_dtype;
  if (model_type != "qwen2" && model_type != "qwen2_moe") j["attention_bias"] = qkv_bias;
  if (is_mla()) {
    j["q_lora_rank"] = mla.q_lora_rank > 0 ? Json(mla.q_lora_rank) : Json();
    j["kv_lora_rank"] = mla.kv_lora_rank;
    j["qk_nope_head_dim"] = mla.qk_nope_head_dim;
    j["qk_rope_head_dim"] = mla.qk_rope_head_dim;
    j["v_head_dim"] = mla.v_head_dim;
    j["rope_interleave"] = mla.rope_interleave;
    j["num_nextn_predict_layers"] = mla.num_nextn_predict_layers;
    if (is_moe()) {
      write_sigmoid_moe_hf_json(moe, j);
    } else {
      j["n_routed_experts"] = 0;
      j["first_k_dense_replace"] = num_layers;
    }
  }
  if (model_type == "qwen3_moe" || model_type == "qwen2_moe") {
    j["num_experts"] = moe.num_experts;
    j["num_experts_per_tok"] = moe.num_experts_per_tok;
    j["moe_intermediate_size"] = moe.moe_intermediate_size;
    j["norm_topk_prob"] = moe.norm_topk_prob;
    j["decoder_sparse_step"] = moe.decoder_sparse_step;
    Json::Array only;
    for (int64_t i : moe.mlp_only_layers) only.emplace_back(i);
    j["mlp_only_layers"] = Json(std::move(only));
    j["router_aux_loss_coef"] = moe.router_aux_loss_coef;
    if (moe.shared_expert_intermediate_size > 0) {
      j["shared_expert_intermediate_size"] = moe.shared_expert_intermediate_size;
    }
  }
  if (model_type == "glm4" || model_type == "glm4_moe") write_glm4(*this, j);
  if (rope_scaling.type == "llama3") {
    Json r = Json::object();
    r["rope_type"] = "llama3";
    r["factor"] = rope_scaling.factor;
    r["low_freq_factor"] = rope_scaling.low_freq_factor;
    r["high_freq_factor"] = rope_scaling.high_freq_factor;
    r["original_max_position_embeddings"] = rope_scaling.original_max_position_embeddings;
    j["rope_scaling"] = r;
  }
  if (rope_scaling.type == "yarn") {
    const auto& s = rope_scaling;
    Json r = Json::object();
    r["rope_type"] = "yarn";
    r["factor"] = s.factor;
    r["original_max_position_embeddings"] = s.original_max_position_embeddings;
    r["beta_fast"] = s.beta_fast;
    r["beta_slow"] = s.beta_slow;
    if (s.mscale != 0) r["mscale"] = s.mscale;
    if (s.mscale_all_dim != 0) r["mscale_all_dim"] = s.mscale_all_dim;
    if (s.attention_factor != 0) r["attention_factor"] = s.attention_factor;
    if (!s.truncate) r["truncate"] = false;
    j["rope_scaling"] = r;
  }
  return j;
}

int64_t ModelConfig::rotary_dim() const {
  return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
}

bool ModelConfig::is_moe_layer(int64_t index) const {
  if (!is_moe() || index < moe.first_k_dense_replace) return false;
  for (int64_t i : moe.mlp_only_layers)
    if (i == index) return false;
  return (index + 1) % moe.decoder_sparse_step == 0;
}

double ModelConfig::attention_scale() const {
  if (!is_mla()) return 1.0 / std::sqrt(double(head_dim));
  double scale = 1.0 / std::sqrt(double(mla.qk_head_dim()));
  if (rope_scaling.type != "default" && rope_scaling.mscale_all_dim != 0) {
    const double m = yarn_get_mscale(rope_scaling.factor, rope_scaling.mscale_all_dim);
    scale *= m * m;
  }
  return scale;
}

double ModelConfig::rope_attention_factor() const {
  const auto& s = rope_scaling;
  if (s.type != "yarn") return 1.0;
  if (s.attention_factor != 0) return s.attention_factor;
  if (s.mscale != 0 && s.mscale_all_dim != 0) {
    return yarn_get_mscale(s.factor, s.mscale) / yarn_get_mscale(s.factor, s.mscale_all_dim);
  }
  return yarn_get_mscale(s.factor, 1.0);
}

int64_t ModelConfig::num_parameters() const {
  int64_t q = num_attention_heads * head_dim, kv = num_key_value_heads * head_dim;
  int64_t attn = hidden_size * (q + 2 * kv) + q * hidden_size + (qkv_bias ? q + 2 * kv : 0) +
                 (qk_norm ? 2 * head_dim : 0);
  if (is_mla()) {
    const auto& m = mla;
    const int64_t heads = num_attention_heads, q_out = heads * m.qk_head_dim();
    attn = m.q_lora_rank > 0 ? hidden_size * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * q_out
                             : hidden_size * q_out;
    attn += hidden_size * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
            m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim) +
            heads * m.v_head_dim * hidden_size;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < num_layers; ++i) {
    int64_t mlp = 3 * hidden_size * intermediate_size;
    if (is_moe_layer(i)) {
      mlp = moe.num_experts * (3 * hidden_size * moe.moe_intermediate_size + hidden_size);
      if (moe.shared_expert_intermediate_size > 0) {
        mlp += 3 * hidden_size * moe.shared_expert_intermediate_size +
               (moe.shared_expert_gated ? hidden_size : 0);
      }
    }
    total += attn + mlp + (post_sublayer_norms ? 4 : 2) * hidden_size;
  }
  int64_t embed = padded_vocab_size * hidden_size * (tie_word_embeddings ? 1 : 2);
  return total + embed + hidden_size;
}

int64_t ModelConfig::num_active_parameters() const {
  int64_t idle = 0;
  for (int64_t i = 0; i < num_layers; ++i) {
    if (is_moe_layer(i)) {
      idle +=
          (moe.num_experts - moe.num_experts_per_tok) * 3 * hidden_size * moe.moe_intermediate_size;
    }
  }
  return num_parameters() - idle;
}

}  // namespace vime
