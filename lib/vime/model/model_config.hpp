// The shape of a decoder-only transformer (Llama-3, Qwen2/2.5, Qwen3, GLM-4, the
// mixture-of-experts Qwen3-MoE, Qwen2-MoE and GLM-4.5, and DeepSeek-V3's multi-head latent
// attention), read from an HF config.json or from Megatron-style flags (MODEL_ARGS), and checked to
// agree when both are given. No torch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/json.hpp"

namespace vime {

struct RopeScaling {
  std::string type = "default";  // "default", "llama3" or "yarn"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
  // YaRN (HF _compute_yarn_parameters): the ramp between extrapolated and interpolated
  // frequencies, and the attention factors (0: unset).
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 0.0;
  double mscale_all_dim = 0.0;
  double attention_factor = 0.0;  // 0: from factor, mscale and mscale_all_dim
  bool truncate = true;
};

// Multi-head latent attention (HF DeepseekV3Attention); kv_lora_rank == 0: none.
struct MlaConfig {
  int64_t q_lora_rank = 0;  // 0: one q_proj (HF null); else q_a_proj -> q_a_layernorm -> q_b_proj
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  // The RoPE part of q and k arrives in DeepSeek's interleaved (even, odd) pairs (HF default).
  bool rope_interleave = true;
  // Multi-token-prediction layers after the last decoder layer in checkpoints (read and written
  // back unchanged, never run).
  int64_t num_nextn_predict_layers = 0;

  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

// The routed experts of an MoE model (HF Qwen3MoeConfig / Qwen2MoeConfig); num_experts == 0: dense.
struct MoeConfig {
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;    // top-k
  int64_t moe_intermediate_size = 0;  // each routed expert's FFN width
  // Renormalise the top-k probabilities to sum to 1 (Megatron: without --moe-router-pre-softmax).
  bool norm_topk_prob = true;
  // HF: layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers.
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  double router_aux_loss_coef = 0.0;
  // A shared expert of this width that every token runs through; 0: none. Qwen2-MoE's is scaled by
  // sigmoid(shared_expert_gate(h)) (mlp.shared_expert.*); DeepSeek-V3's and GLM-4.5's are
  // n_shared_experts experts side by side, ungated (mlp.shared_experts.*, width n_shared_experts *
  // moe_intermediate_size).
  int64_t shared_expert_intermediate_size = 0;
  bool shared_expert_gated = true;

  // --- sigmoid routing (HF DeepseekV3Config / Glm4MoeConfig; Megatron's
  // --moe-router-score-function sigmoid with --moe-router-enable-expert-bias, ...)
  std::string score_function = "softmax";  // "softmax" or "sigmoid"
  // e_score_correction_bias: a per-expert fp32 bias added to the scores for choosing the experts
  // only (mlp.gate.e_score_correction_bias; kept fixed, not trained).
  bool expert_bias = false;
  // Group-limited top-k: the experts form n_group groups; a token picks topk_group groups (by
  // the sum of each group's two best biased scores) and its experts among theirs.
  int64_t n_group = 1;
  int64_t topk_group = 1;
  // Multiplies the routing weights (Megatron's --moe-router-topk-scaling-factor).
  double routed_scaling_factor = 1.0;
  // HF first_k_dense_replace: layers below it are dense MLPs of intermediate_size.
  int64_t first_k_dense_replace = 0;
};

// The MoE keys of an HF DeepseekV3Config / Glm4MoeConfig (n_routed_experts, num_experts_per_tok,
// moe_intermediate_size, n_shared_experts, n_group, topk_group, routed_scaling_factor,
// norm_topk_prob, first_k_dense_replace): sigmoid routing with the correction bias. Throws
// vime::Error naming `where` and the key.
MoeConfig sigmoid_moe_from_hf_json(const Json& config, const std::string& where);
// Those keys written back into an HF config.json object.
void write_sigmoid_moe_hf_json(const MoeConfig& moe, Json& out);

struct ModelConfig {
  // "qwen3", "qwen2", "llama", "qwen3_moe", "qwen2_moe", "glm4", "glm4_moe", "deepseek_v3"
  std::string model_type = "qwen3";
  int64_t vocab_size = 0;         // the HF vocab_size (rows of the HF embedding)
  int64_t padded_vocab_size = 0;  // rows of vime's embedding/output (multiple of 128 by default)
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // MLA: qk_rope_head_dim (the rotated part, as HF sets it)
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // Qwen2/2.5
  bool qk_norm = false;   // Qwen3
  int64_t max_position_embeddings = 32768;
  MoeConfig moe;
  MlaConfig mla;

  // --- GLM-4 (HF Glm4Config, Glm4MoeConfig)
  // RoPE rotates the first head_dim * partial_rotary_factor channels of each head (Megatron's
  // --rotary-percent); the rest pass through.
  double partial_rotary_factor = 1.0;
  // GLM-4 dense: rotate interleaved (even, odd) pairs (Megatron's --rotary-interleaved) instead of
  // the two halves of the rotated channels.
  bool rope_interleaved = false;
  // GLM-4 dense: RMSNorms on the attention's and the MLP's outputs before each residual add
  // (post_self_attn_layernorm, post_mlp_layernorm; slime's --post-self-attn-layernorm
  // --post-mlp-layernorm).
  bool post_sublayer_norms = false;
  // The channels RoPE rotates.
  int64_t rotary_dim() const;

  bool is_moe() const { return moe.num_experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // The softmax scale of attention: head_dim^-0.5, or for MLA qk_head_dim^-0.5 times YaRN's
  // mscale(factor, mscale_all_dim)^2 (HF DeepseekV3Attention.scaling).
  double attention_scale() const;
  // YaRN's factor on the cos/sin tables (HF's attention_scaling); 1 for other RoPE types.
  double rope_attention_factor() const;
  // Whether layer `index` runs the routed experts (else the dense MLP of intermediate_size).
  bool is_moe_layer(int64_t index) const;

  // From an HF config.json object; `where` names the file in errors.
  static ModelConfig from_hf_json(const Json& config, const std::string& where);
  static ModelConfig from_hf_dir(const std::filesystem::path& dir);
  // From --num-layers, --hidden-size, ... (slime's MODEL_ARGS). Throws UsageError naming a missing
  // flag.
  static ModelConfig from(const Args& args);
  // Throws UsageError naming the first architecture flag that is set and disagrees with this
  // config.
  void check_agrees_with_args(const Args& args) const;

  // An HF config.json for this shape (architectures, model_type, torch_dtype).
  Json to_hf_json(const std::string& torch_dtype = "bfloat16") const;
  // Parameters, counting the padded vocabulary once (or twice when untied).
  int64_t num_parameters() const;
  // The parameters one token runs through: num_parameters() less the routed experts it is not
  // sent to (what MFU counts for an MoE model; num_parameters() for a dense one).
  int64_t num_active_parameters() const;
};

// Megatron's --moe-layer-freq: an int N (layer i is MoE when i % N == 0) or a Python list
// expression such as "[0]*3+[1]*45" or "[1, 1, 0]"; one entry per layer (1: MoE). Throws
// UsageError naming the flag when it does not parse or has the wrong length.
std::vector<int64_t> parse_moe_layer_freq(const std::string& text, int64_t num_layers);

// Megatron's padding: the smallest multiple of `divisible_by` that is >= vocab_size.
int64_t pad_vocab_size(int64_t vocab_size, int64_t divisible_by);

}  // namespace vime
