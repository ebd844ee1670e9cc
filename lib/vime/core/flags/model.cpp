// Model: Megatron's architecture flags as slime's scripts/models presets pass them (MODEL_ARGS).
// vime's model is a decoder-only transformer: Llama-3, Qwen2/2.5 (qkv bias), Qwen3 (q/k RMSNorm),
// Qwen3-MoE and Qwen2-MoE (softmax top-k routing, a gated shared expert), DeepSeek-V3's
// multi-head latent attention; GQA, RoPE (rotary base, Llama-3 and YaRN scaling), RMSNorm, SwiGLU,
// tied or untied embeddings. Names, dests and defaults are Megatron-LM's
// (megatron/training/arguments.py); other MoE routers and exotic attention are kNotYet.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    // --- size
    {"--num-layers", kInt, nullptr, "Number of transformer layers."},
    {"--hidden-size", kInt, nullptr, "Width of the residual stream (model dimension)."},
    {"--ffn-hidden-size", kInt, nullptr,
     "Inner width of each MLP (the SwiGLU gate/up projection); 4 x --hidden-size when unset."},
    {"--num-attention-heads", kInt, nullptr, "Number of query heads per attention layer."},
    {"--kv-channels", kInt, nullptr,
     "Size of one attention head (head_dim); --hidden-size / --num-attention-heads when unset."},
    {"--group-query-attention", kStoreTrue, nullptr,
     "Use grouped-query attention: --num-query-groups key/value heads shared by the query heads."},
    {"--num-query-groups", kInt, "1",
     "Number of key/value heads under --group-query-attention (ignored without it)."},
    {"--vocab-size", kInt, nullptr, "Vocabulary size before padding (the HF config's vocab_size)."},
    {"--make-vocab-size-divisible-by", kInt, "128",
     "When --padded-vocab-size is not given, pad the vocabulary up to a multiple of this."},
    {"--max-position-embeddings", kInt, nullptr,
     "Size of a learned position table; slime overwrites it with a placeholder and vime's RoPE "
     "has no length limit.",
     kNoEffect},
    {"--seq-length", kInt, nullptr,
     "Megatron's fixed training sequence length; slime overwrites it with a placeholder and vime "
     "packs variable-length samples.",
     kNoEffect},

    // --- layers
    {"--swiglu", kStoreTrue, nullptr,
     "Use a SwiGLU MLP (SiLU-gated linear unit) instead of GeLU; vime implements only SwiGLU."},
    {"--normalization", kString, "LayerNorm",
     "Normalization layer; vime implements RMSNorm and refuses LayerNorm.", kYes,
     "LayerNorm|RMSNorm"},
    {"--norm-epsilon", kFloat, "1e-5", "Epsilon of every normalization layer (HF rms_norm_eps)."},
    {"--disable-bias-linear",
     kStoreFalse,
     nullptr,
     "Drop the bias of every linear layer (Llama/Qwen style; vime takes biases from config.json).",
     kNoEffect,
     {},
     "add_bias_linear"},
    {"--add-qkv-bias", kStoreTrue, nullptr,
     "Give the query/key/value projections a bias even under --disable-bias-linear (Qwen2/2.5)."},
    {"--qk-layernorm", kStoreTrue, nullptr,
     "Normalize each query and key head before RoPE, with the --normalization layer (Qwen3)."},
    {"--untie-embeddings-and-output-weights", kStoreTrue, nullptr,
     "Give the output projection its own weights instead of sharing the input embedding."},
    {"--apply-layernorm-1p", kStoreTrue, nullptr,
     "Store norm weights centred on zero (applied as 1 + w).", kNotYet},
    {"--apply-residual-connection-post-layernorm", kStoreTrue, nullptr,
     "Take the residual after the layer norm (original BERT ordering).", kNotYet},
    {"--openai-gelu", kStoreTrue, nullptr, "Use OpenAI's tanh GeLU approximation in the MLP.",
     kNotYet},
    {"--squared-relu", kStoreTrue, nullptr, "Use squared ReLU as the MLP activation.", kNotYet},
    {"--quick-geglu", kStoreTrue, nullptr, "Use a gated quick-GeLU MLP (GPT-OSS).", kNotYet},
    {"--activation-func-clamp-value", kFloat, nullptr,
     "Clamp the first MLP projection's output before the quick-GeLU activation.", kNotYet},
    {"--glu-linear-offset", kFloat, "0.0",
     "Constant added to the linear half of a gated MLP: act(x0) * (x1 + offset).", kNotYet},
    {"--post-self-attn-layernorm", kStoreTrue, nullptr,
     "Add a norm after the attention block's output (GLM-4, slime's flag)."},
    {"--post-mlp-layernorm", kStoreTrue, nullptr,
     "Add a norm after the MLP block's output (GLM-4, slime's flag)."},
    {"--use-gated-attention", kStoreTrue, nullptr,
     "Use gated attention (Qwen3-Next / Qwen3.5, slime's flag).", kNotYet},
    {"--attention-output-gate", kStoreTrue, nullptr,
     "Multiply the attention output by a learned sigmoid gate (Qwen3.5).", kNotYet},
    {"--qk-l2-norm", kStoreTrue, nullptr, "L2-normalize queries and keys (Llama 4).", kNotYet},
    {"--softmax-type", kString, "vanilla",
     "Attention softmax variant; learnable and off-by-one add a sink term (GPT-OSS).", kNotYet,
     "learnable|vanilla|off-by-one"},
    {"--window-size", kString, nullptr,
     "Sliding-window attention size as 'left,right'; unset means full attention.", kNotYet},
    {"--window-attn-skip-freq", kString, nullptr,
     "Which layers use full attention between sliding-window layers (N or a Python list pattern).",
     kNotYet},
    {"--spec", kStringList, nullptr,
     "A Python module and function returning a Megatron layer spec; vime builds its own model, "
     "cannot load Python specs, and accepts only slime's GLM-4 spec (slime_plugins.models.glm4 "
     "get_glm_spec, with --post-self-attn-layernorm --post-mlp-layernorm)."},

    // --- positions
    {"--position-embedding-type", kString, "learned_absolute",
     "Position encoding; vime implements rope (also selected by --use-rotary-position-embeddings).",
     kYes, "learned_absolute|rope|mrope|relative|none"},
    {"--use-rotary-position-embeddings", kStoreTrue, nullptr,
     "Use rotary position embeddings (older spelling of --position-embedding-type rope)."},
    {"--no-position-embedding",
     kStoreFalse,
     nullptr,
     "Drop the learned absolute position table; vime never has one.",
     kNoEffect,
     {},
     "add_position_embedding"},
    {"--rotary-base", kInt, "10000", "RoPE base frequency (HF rope_theta)."},
    {"--rotary-percent", kFloat, "1.0",
     "Fraction of each head's dimensions that RoPE rotates, the first ones (HF "
     "partial_rotary_factor; GLM-4 and GLM-4.5 rotate 0.5)."},
    {"--rotary-interleaved", kStoreTrue, nullptr,
     "Rotate interleaved (even, odd) pairs instead of the two halves of the rotated channels "
     "(GLM-4)."},
    {"--rotary-seq-len-interpolation-factor", kInt, nullptr,
     "Linear position interpolation factor for RoPE.", kNotYet},
    {"--use-rope-scaling", kStoreTrue, nullptr,
     "Apply Llama-3.x RoPE frequency scaling (frequency factors 1 and 4, original context 8192)."},
    {"--rope-scaling-factor", kFloat, "8.0",
     "Llama-3.x RoPE scaling factor under --use-rope-scaling (HF rope_scaling.factor)."},
    {"--rotary-scaling-factor", kFloat, "1.0",
     "YaRN scaling factor of MLA models (DeepSeek-V3 40, Kimi-K2 32; 1: none). Megatron reads it "
     "only for MLA; slime's Llama-3.x presets also pass their --use-rope-scaling factor here, "
     "which vime takes from --rope-scaling-factor."},
    {"--rope-type", kString, nullptr,
     "RoPE variant; slime fills in rope (yarn for MLA) and vime implements rope only.", kYes,
     "rope|yarn"},
    {"--no-rope-freq", kString, nullptr,
     "Layers that skip RoPE (N for every N-th layer, or a Python list pattern).", kNotYet},
    {"--mrope-section", kIntList, nullptr,
     "Channel split of multimodal RoPE (temporal, height, width).", kNotYet},

    // --- mixture of experts (Qwen3-MoE, Qwen2-MoE, GLM-4.5, DeepSeek-V3; model/moe.hpp)
    {"--num-experts", kInt, nullptr,
     "Number of routed experts per MoE layer; unset means a dense model."},
    {"--moe-layer-freq", kString, "1",
     "Which layers are MoE: N for every N-th layer, or a Python list pattern such as "
     "[0]*3+[1]*58."},
    {"--moe-ffn-hidden-size", kInt, nullptr,
     "Inner width of each routed expert's MLP; --ffn-hidden-size when unset."},
    {"--moe-shared-expert-intermediate-size", kInt, nullptr,
     "Inner width of the shared expert(s): Qwen2-MoE's gated one, or DeepSeek-V3's and GLM-4.5's "
     "ungated ones side by side (n_shared_experts x --moe-ffn-hidden-size); unset means none."},
    {"--moe-shared-expert-gate", kStoreTrue, nullptr,
     "Scale the shared expert's output by a learned sigmoid gate (Qwen2-MoE; without it the "
     "shared experts are DeepSeek-V3's, which need sigmoid routing)."},
    {"--moe-router-topk", kInt, "2", "Experts each token is routed to."},
    {"--moe-router-score-function", kString, "softmax",
     "Router scoring function: softmax (Qwen3-MoE, Qwen2-MoE) or sigmoid in fp32 (DeepSeek-V3, "
     "GLM-4.5; the top-k scores are renormalised whenever k > 1).",
     kYes, "softmax|sigmoid"},
    {"--moe-router-pre-softmax", kStoreTrue, nullptr,
     "Keep the full softmax's top-k values instead of renormalising them (HF norm_topk_prob "
     "false)."},
    {"--moe-router-dtype", kString, nullptr,
     "Precision of the routing softmax; vime always takes it in fp32 (HF's order) and refuses "
     "fp64.",
     kYes, "fp32|fp64"},
    {"--moe-router-num-groups", kInt, nullptr,
     "Expert groups for group-limited routing (DeepSeek-V3 style, HF n_group; sigmoid routing; "
     "a group scores the sum of its two best biased scores, as HF does).",
     kYes},
    {"--moe-router-group-topk", kInt, nullptr,
     "Groups selected per token in group-limited routing (HF topk_group).", kYes},
    {"--moe-router-topk-scaling-factor", kFloat, nullptr,
     "Multiplier on the selected experts' routing weights (HF routed_scaling_factor).", kYes},
    {"--moe-router-enable-expert-bias", kStoreTrue, nullptr,
     "Add the per-expert correction bias (mlp.gate.e_score_correction_bias, fp32) to the sigmoid "
     "scores for choosing experts; vime keeps it fixed.",
     kYes},
    {"--moe-router-bias-update-rate", kFloat, "1e-3",
     "Step size of the expert-bias update under --moe-router-enable-expert-bias; vime keeps the "
     "bias fixed and accepts only 0.",
     kYes},
    {"--moe-router-load-balancing-type", kStringList, "aux_loss",
     "Load-balancing strategy (one, or one per layer group); vime computes aux_loss, and accepts "
     "the others only with --moe-aux-loss-coeff 0.",
     kYes, "aux_loss|seq_aux_loss|global_aux_loss|sinkhorn|none"},
    {"--moe-aux-loss-coeff", kFloatList, "0.0",
     "Weight of the load-balancing auxiliary loss (Megatron's switch_load_balancing_loss_func), "
     "logged as train/load_balancing_loss; the first value applies to every MoE layer."},
    {"--moe-z-loss-coeff", kFloat, nullptr, "Weight of the router z-loss.", kNotYet},
    {"--moe-input-jitter-eps", kFloat, nullptr,
     "Multiplicative noise applied to the router input during training.", kNotYet},
    {"--moe-router-force-load-balancing", kStoreTrue, nullptr,
     "Route with random logits to force balanced load (benchmarking only).", kNotYet},
    {"--moe-expert-capacity-factor", kFloat, nullptr,
     "Per-expert capacity as a multiple of the even share; unset means no token is dropped.",
     kNotYet},
    {"--moe-pad-expert-input-to-capacity", kStoreTrue, nullptr,
     "Pad every expert's input to its full capacity.", kNotYet},
    {"--moe-token-drop-policy", kString, "probs",
     "Which tokens are dropped once an expert is full: lowest probability or latest position.",
     kNotYet, "probs|position"},
    {"--moe-apply-probs-on-input", kStoreTrue, nullptr,
     "Multiply routing probabilities into the expert input instead of its output.", kNotYet},
    {"--moe-use-upcycling", kStoreTrue, nullptr,
     "Convert a dense checkpoint into an MoE model and save it.", kNotYet},

    // --- multi-latent attention (DeepSeek-V3, Kimi-K2, Moonlight; model/mla.hpp)
    {"--multi-latent-attention", kStoreTrue, nullptr,
     "Use multi-head latent attention (MLA, HF DeepseekV3ForCausalLM); --qk-layernorm then names "
     "the latent norms (q_a_layernorm, kv_a_layernorm), which MLA always has."},
    {"--q-lora-rank", kInt, nullptr,
     "MLA: rank of the low-rank query projection (q_a_proj / q_b_proj); unset means one q_proj."},
    {"--kv-lora-rank", kInt, "32", "MLA: width of the shared key/value latent (kv_lora_rank)."},
    {"--qk-head-dim", kInt, "128", "MLA: query/key head size without the RoPE part."},
    {"--qk-pos-emb-head-dim", kInt, "64", "MLA: size of the RoPE part of each query/key head."},
    {"--v-head-dim", kInt, "128", "MLA: value head size."},
    {"--mscale", kFloat, "1.0", "MLA: YaRN's mscale (HF rope_scaling.mscale)."},
    {"--mscale-all-dim", kFloat, "0.0",
     "MLA: YaRN's mscale_all_dim; the softmax scale is multiplied by mscale(factor, this)^2."},
};
}  // namespace
FlagGroup model() { return {"model", "Model architecture", kFlags}; }
}  // namespace vime::core::flags
