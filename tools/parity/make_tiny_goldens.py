#!/usr/bin/python3
"""Writes the tiny-model goldens of tests/model (run with Debian's python3-torch on CPU):

    /usr/bin/python3 tools/parity/make_tiny_goldens.py tests/model/golden [name...]

(names: only those configs, e.g. tiny_glm4; the others' files stay as they are.)

For each of a tiny Qwen3, Qwen2, Llama-3 (rope scaling), Qwen3-MoE (top-3 of 10 experts,
renormalised, one dense mlp_only layer) and Qwen2-MoE (top-2 of 8, not renormalised, a gated shared
expert), GLM-4 (partial interleaved rotary, the extra norms, fused gate_up_proj), GLM-4.5
(group-limited sigmoid routing with a correction bias, routed scaling, a dense first layer,
shared experts, partial rotary, QK norm), a plain sigmoid-routed GLM-4.5 and DeepSeek-V3
(multi-head latent attention: one with q_proj and YaRN rope scaling, one with the low-rank q_a/q_b
path and a multi-token-prediction layer kept in the checkpoint) config: random fp32
weights in an HF directory (config.json + model.safetensors, experts in
the Hub's one-tensor-per-expert layout), and the reference logits of three packed sequences in
logits.safetensors, computed by a plain PyTorch port of HF transformers' eager modeling code
(modeling_qwen3.py / modeling_qwen2.py / modeling_llama.py / modeling_qwen3_moe.py /
modeling_qwen2_moe.py / modeling_glm4.py / modeling_glm4_moe.py / modeling_deepseek_v3.py with
modeling_rope_utils.py's yarn: Qwen3MoeSparseMoeBlock's and Qwen2MoeSparseMoeBlock's loop over experts
with index_add_). The GPU parity script
(tools/parity/hf_parity.py) checks vime against HF transformers itself.
"""
import json
import math
import os
import struct
import sys

import torch

SEQUENCES = [[1, 5, 9, 17, 33], [2, 4, 8, 16, 32, 64, 95, 3, 7], [90, 91, 92]]

CONFIGS = {
    "tiny_qwen3": dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", vocab_size=96,
                       hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                       rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
                       attention_bias=False, max_position_embeddings=4096, hidden_act="silu"),
    "tiny_qwen2": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", vocab_size=96,
                       hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                       rope_theta=1000000.0, tie_word_embeddings=False,
                       max_position_embeddings=4096, hidden_act="silu"),
    "tiny_llama": dict(architectures=["LlamaForCausalLM"], model_type="llama", vocab_size=96,
                       hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=1, rms_norm_eps=1e-5,
                       rope_theta=500000.0, tie_word_embeddings=False, attention_bias=False,
                       max_position_embeddings=4096, hidden_act="silu",
                       rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                         high_freq_factor=4.0,
                                         original_max_position_embeddings=8)),
    "tiny_qwen3_moe": dict(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe",
                           vocab_size=96, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                           head_dim=16, rms_norm_eps=1e-6, rope_theta=1000000.0,
                           tie_word_embeddings=False, attention_bias=False,
                           max_position_embeddings=4096, hidden_act="silu", num_experts=10,
                           num_experts_per_tok=3, moe_intermediate_size=16, norm_topk_prob=True,
                           decoder_sparse_step=1, mlp_only_layers=[1],
                           router_aux_loss_coef=0.001),
    "tiny_qwen2_moe": dict(architectures=["Qwen2MoeForCausalLM"], model_type="qwen2_moe",
                           vocab_size=96, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                           rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
                           max_position_embeddings=4096, hidden_act="silu", num_experts=8,
                           num_experts_per_tok=2, moe_intermediate_size=16,
                           shared_expert_intermediate_size=24, norm_topk_prob=False,
                           decoder_sparse_step=1, mlp_only_layers=[],
                           router_aux_loss_coef=0.001),
    "tiny_glm4": dict(architectures=["Glm4ForCausalLM"], model_type="glm4", vocab_size=96,
                      hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                      partial_rotary_factor=0.5, attention_bias=True, rms_norm_eps=1e-5,
                      rope_theta=10000.0, tie_word_embeddings=False,
                      max_position_embeddings=4096, hidden_act="silu"),
    # Group-limited sigmoid routing (4 groups of 2 experts, 2 groups kept), a nonzero correction
    # bias, routed_scaling_factor 2.5, one dense layer first, a shared expert, QK norm.
    "tiny_glm4_moe": dict(architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe",
                          vocab_size=96, hidden_size=32, intermediate_size=48,
                          num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                          head_dim=16, partial_rotary_factor=0.5, attention_bias=True,
                          use_qk_norm=True, rms_norm_eps=1e-5, rope_theta=1000000.0,
                          tie_word_embeddings=False, max_position_embeddings=4096,
                          hidden_act="silu", n_routed_experts=8, num_experts_per_tok=3,
                          moe_intermediate_size=16, n_shared_experts=1, n_group=4, topk_group=2,
                          routed_scaling_factor=2.5, norm_topk_prob=True,
                          first_k_dense_replace=1),
    # Plain sigmoid routing: one group, no renormalisation, no shared expert, full rotary.
    "tiny_sigmoid_moe": dict(architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe",
                             vocab_size=96, hidden_size=32, intermediate_size=48,
                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                             head_dim=16, partial_rotary_factor=1.0, attention_bias=False,
                             use_qk_norm=False, rms_norm_eps=1e-6, rope_theta=10000.0,
                             tie_word_embeddings=True, max_position_embeddings=4096,
                             hidden_act="silu", n_routed_experts=6, num_experts_per_tok=2,
                             moe_intermediate_size=16, n_shared_experts=0, n_group=1,
                             topk_group=1, routed_scaling_factor=1.0, norm_topk_prob=False,
                             first_k_dense_replace=0),
    # q_lora_rank null, YaRN (mscale != mscale_all_dim: cos/sin scaled too), v_head_dim != qk.
    "tiny_deepseek_v3": dict(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                             vocab_size=96, hidden_size=32, intermediate_size=48,
                             moe_intermediate_size=16, num_hidden_layers=2, num_attention_heads=4,
                             num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4,
                             routed_scaling_factor=1.0, kv_lora_rank=16, q_lora_rank=None,
                             qk_rope_head_dim=8, v_head_dim=12, qk_nope_head_dim=8, n_group=1,
                             topk_group=1, num_experts_per_tok=2, first_k_dense_replace=2,
                             norm_topk_prob=True, rms_norm_eps=1e-5, rope_theta=10000.0,
                             rope_scaling=dict(rope_type="yarn", factor=4.0,
                                               original_max_position_embeddings=64,
                                               beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                                               mscale_all_dim=0.8),
                             max_position_embeddings=256, tie_word_embeddings=False,
                             rope_interleave=True, attention_bias=False, hidden_act="silu"),
    # q_a_proj -> q_a_layernorm -> q_b_proj, no rope scaling (Moonlight), one MTP layer.
    "tiny_deepseek_v3_qlora": dict(architectures=["DeepseekV3ForCausalLM"],
                                   model_type="deepseek_v3", vocab_size=96, hidden_size=32,
                                   intermediate_size=48, moe_intermediate_size=16,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4,
                                   routed_scaling_factor=1.0, kv_lora_rank=16, q_lora_rank=12,
                                   qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8,
                                   n_group=1, topk_group=1, num_experts_per_tok=2,
                                   first_k_dense_replace=2, norm_topk_prob=True,
                                   rms_norm_eps=1e-5, rope_theta=50000.0, rope_scaling=None,
                                   max_position_embeddings=256, tie_word_embeddings=False,
                                   rope_interleave=True, attention_bias=False, hidden_act="silu",
                                   num_nextn_predict_layers=1),
    # DeepSeek-V3's MoE: a dense first layer, then 8 experts in 4 groups (2 kept), top-2, sigmoid
    # with a correction bias, routed_scaling_factor 2.5, one shared expert; q_a/q_b and YaRN.
    "tiny_deepseek_v3_moe": dict(architectures=["DeepseekV3ForCausalLM"],
                                 model_type="deepseek_v3", vocab_size=96, hidden_size=32,
                                 intermediate_size=48, moe_intermediate_size=16,
                                 num_hidden_layers=3, num_attention_heads=4,
                                 num_key_value_heads=4, n_shared_experts=1, n_routed_experts=8,
                                 routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=12,
                                 qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8,
                                 n_group=4, topk_group=2, num_experts_per_tok=2,
                                 first_k_dense_replace=1, norm_topk_prob=True,
                                 rms_norm_eps=1e-6, rope_theta=10000.0,
                                 rope_scaling=dict(rope_type="yarn", factor=40.0,
                                                   original_max_position_embeddings=64,
                                                   beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                                                   mscale_all_dim=1.0),
                                 max_position_embeddings=256, tie_word_embeddings=False,
                                 rope_interleave=True, attention_bias=False, hidden_act="silu"),
}


def is_sigmoid_moe(cfg):
    return cfg["model_type"] in ("glm4_moe", "deepseek_v3")


def is_mla(cfg):
    return cfg["model_type"] == "deepseek_v3"


def is_moe_layer(cfg, i):
    if is_sigmoid_moe(cfg):
        return i >= cfg["first_k_dense_replace"]
    return (cfg.get("num_experts", 0) > 0 and i not in cfg.get("mlp_only_layers", [])
            and (i + 1) % cfg.get("decoder_sparse_step", 1) == 0)

DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int64: "I64"}


def write_safetensors(path, tensors):
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        data = t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def sigmoid_moe_weights(cfg, w, p, rnd, g):
    """DeepseekV3MoE / Glm4MoeMoE tensors: router with correction bias, experts, shared experts."""
    h = cfg["hidden_size"]
    fe, ne = cfg["moe_intermediate_size"], cfg["n_routed_experts"]
    w[p + "mlp.gate.weight"] = rnd(ne, h) * 3
    w[p + "mlp.gate.e_score_correction_bias"] = 0.1 * torch.randn(ne, generator=g)
    for e in range(ne):
        w[p + f"mlp.experts.{e}.gate_proj.weight"] = rnd(fe, h)
        w[p + f"mlp.experts.{e}.up_proj.weight"] = rnd(fe, h)
        w[p + f"mlp.experts.{e}.down_proj.weight"] = rnd(h, fe)
    fs = fe * cfg["n_shared_experts"]
    if fs:
        w[p + "mlp.shared_experts.gate_proj.weight"] = rnd(fs, h)
        w[p + "mlp.shared_experts.up_proj.weight"] = rnd(fs, h)
        w[p + "mlp.shared_experts.down_proj.weight"] = rnd(h, fs)


def make_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    h, f = cfg["hidden_size"], cfg["intermediate_size"]
    d = cfg.get("head_dim", h // cfg["num_attention_heads"])
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d
    rnd = lambda *shape: torch.randn(*shape, generator=g) * 0.2
    norm = lambda n: 1.0 + 0.1 * torch.randn(n, generator=g)
    w = {"model.embed_tokens.weight": rnd(cfg["vocab_size"], h)}
    mtp = cfg.get("num_nextn_predict_layers", 0)
    for i in range(cfg["num_hidden_layers"] + mtp):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(h)
        if i >= cfg["num_hidden_layers"]:  # DeepSeek's multi-token-prediction layer
            w[p + "enorm.weight"] = norm(h)
            w[p + "hnorm.weight"] = norm(h)
            w[p + "eh_proj.weight"] = rnd(h, 2 * h)
            w[p + "shared_head.norm.weight"] = norm(h)
        if is_mla(cfg):
            heads, r = cfg["num_attention_heads"], cfg["kv_lora_rank"]
            qk = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]
            if cfg["q_lora_rank"] is None:
                w[p + "self_attn.q_proj.weight"] = rnd(heads * qk, h)
            else:
                w[p + "self_attn.q_a_proj.weight"] = rnd(cfg["q_lora_rank"], h)
                w[p + "self_attn.q_a_layernorm.weight"] = norm(cfg["q_lora_rank"])
                w[p + "self_attn.q_b_proj.weight"] = rnd(heads * qk, cfg["q_lora_rank"])
            w[p + "self_attn.kv_a_proj_with_mqa.weight"] = rnd(r + cfg["qk_rope_head_dim"], h)
            w[p + "self_attn.kv_a_layernorm.weight"] = norm(r)
            w[p + "self_attn.kv_b_proj.weight"] = rnd(
                heads * (cfg["qk_nope_head_dim"] + cfg["v_head_dim"]), r)
            w[p + "self_attn.o_proj.weight"] = rnd(h, heads * cfg["v_head_dim"])
            w[p + "post_attention_layernorm.weight"] = norm(h)
            if is_moe_layer(cfg, i) and i < cfg["num_hidden_layers"]:
                sigmoid_moe_weights(cfg, w, p, rnd, g)
                continue
            w[p + "mlp.gate_proj.weight"] = rnd(f, h)
            w[p + "mlp.up_proj.weight"] = rnd(f, h)
            w[p + "mlp.down_proj.weight"] = rnd(h, f)
            continue
        w[p + "self_attn.q_proj.weight"] = rnd(q, h)
        w[p + "self_attn.k_proj.weight"] = rnd(kv, h)
        w[p + "self_attn.v_proj.weight"] = rnd(kv, h)
        if cfg["model_type"] in ("qwen2", "qwen2_moe") or cfg.get("attention_bias"):
            w[p + "self_attn.q_proj.bias"] = rnd(q)
            w[p + "self_attn.k_proj.bias"] = rnd(kv)
            w[p + "self_attn.v_proj.bias"] = rnd(kv)
        w[p + "self_attn.o_proj.weight"] = rnd(h, q)
        if has_qk_norm(cfg):
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(h)
        if cfg["model_type"] == "glm4":
            w[p + "post_self_attn_layernorm.weight"] = norm(h)
            w[p + "post_mlp_layernorm.weight"] = norm(h)
            w[p + "mlp.gate_up_proj.weight"] = rnd(2 * f, h)  # gate rows, then up rows
            w[p + "mlp.down_proj.weight"] = rnd(h, f)
            continue
        if is_moe_layer(cfg, i) and is_sigmoid_moe(cfg):
            sigmoid_moe_weights(cfg, w, p, rnd, g)
            continue
        if is_moe_layer(cfg, i):
            fe = cfg["moe_intermediate_size"]
            # A wide router: the top-k choice is far from ties, so rounding cannot flip it.
            w[p + "mlp.gate.weight"] = rnd(cfg["num_experts"], h) * 3
            for e in range(cfg["num_experts"]):
                w[p + f"mlp.experts.{e}.gate_proj.weight"] = rnd(fe, h)
                w[p + f"mlp.experts.{e}.up_proj.weight"] = rnd(fe, h)
                w[p + f"mlp.experts.{e}.down_proj.weight"] = rnd(h, fe)
            fs = cfg.get("shared_expert_intermediate_size", 0)
            if fs:
                w[p + "mlp.shared_expert.gate_proj.weight"] = rnd(fs, h)
                w[p + "mlp.shared_expert.up_proj.weight"] = rnd(fs, h)
                w[p + "mlp.shared_expert.down_proj.weight"] = rnd(h, fs)
                w[p + "mlp.shared_expert_gate.weight"] = rnd(1, h)
            continue
        w[p + "mlp.gate_proj.weight"] = rnd(f, h)
        w[p + "mlp.up_proj.weight"] = rnd(f, h)
        w[p + "mlp.down_proj.weight"] = rnd(h, f)
    w["model.norm.weight"] = norm(h)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = rnd(cfg["vocab_size"], h)
    return w


# ---- a port of HF's eager modeling code (one sequence at a time, batch of 1) ----
def rms_norm(x, weight, eps):
    dtype = x.dtype
    x = x.to(torch.float32)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x.to(dtype)


def inv_freq_of(cfg, dim):
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    rs = cfg.get("rope_scaling")
    if rs and rs.get("rope_type") == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wl < high_wl) * ~(wl > low_wl)
        inv = torch.where(medium, smoothed, inv_l)
    return inv


def yarn_inv_freq(cfg, dim):
    """modeling_rope_utils._compute_yarn_parameters: (inv_freq, attention_factor)."""
    rs, base = cfg["rope_scaling"], cfg["rope_theta"]
    factor = rs["factor"]
    attention_factor, mscale, mscale_all_dim = (rs.get("attention_factor"), rs.get("mscale"),
                                                rs.get("mscale_all_dim"))
    original = rs["original_max_position_embeddings"]

    def get_mscale(scale, mscale=1):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast, beta_slow = rs.get("beta_fast") or 32, rs.get("beta_slow") or 1

    def correction_dim(rot):
        return (dim * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    extrapolation_factor = 1 - ramp
    inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
    return inv, attention_factor


def mla_scaling(cfg):
    """DeepseekV3Attention.scaling."""
    scaling = (cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]) ** -0.5
    rs = cfg.get("rope_scaling")
    if rs and rs.get("rope_type", "default") != "default" and rs.get("mscale_all_dim", 0):
        factor, m = rs["factor"], rs["mscale_all_dim"]
        mscale = 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0
        scaling = scaling * mscale * mscale
    return scaling


def mla_attention(cfg, w, p, y, cos, sin):
    """DeepseekV3Attention.forward (eager, batch of one): [T, hidden] -> [T, hidden]."""
    t, nh = y.shape[0], cfg["num_attention_heads"]
    nope, rope, vd, r = (cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"],
                         cfg["kv_lora_rank"])
    lin = lambda x, name: torch.nn.functional.linear(x, w[p + name])
    if cfg["q_lora_rank"] is None:
        q = lin(y, "self_attn.q_proj.weight")
    else:  # DeepseekV3RMSNorm(q_lora_rank): HF's default eps, not rms_norm_eps
        q = lin(rms_norm(lin(y, "self_attn.q_a_proj.weight"), w[p + "self_attn.q_a_layernorm.weight"],
                         1e-6), "self_attn.q_b_proj.weight")
    q = q.view(t, nh, nope + rope).transpose(0, 1)
    q_pass, q_rot = torch.split(q, [nope, rope], dim=-1)
    compressed = lin(y, "self_attn.kv_a_proj_with_mqa.weight")
    k_pass, k_rot = torch.split(compressed, [r, rope], dim=-1)
    k_pass = lin(rms_norm(k_pass, w[p + "self_attn.kv_a_layernorm.weight"], 1e-6),
                 "self_attn.kv_b_proj.weight").view(t, nh, nope + vd).transpose(0, 1)
    k_pass, v = torch.split(k_pass, [nope, vd], dim=-1)
    k_rot = k_rot.view(1, t, rope)
    if cfg.get("rope_interleave", True):  # apply_rotary_pos_emb_interleave
        q_rot = q_rot.reshape(nh, t, rope // 2, 2).transpose(3, 2).reshape(nh, t, rope)
        k_rot = k_rot.reshape(1, t, rope // 2, 2).transpose(3, 2).reshape(1, t, rope)
    q_rot = q_rot * cos + rotate_half(q_rot) * sin
    k_rot = k_rot * cos + rotate_half(k_rot) * sin
    k_rot = k_rot.expand(nh, t, rope)
    query = torch.cat((q_pass, q_rot), dim=-1)
    key = torch.cat((k_pass, k_rot), dim=-1)
    scores = query @ key.transpose(1, 2) * mla_scaling(cfg)
    scores = scores + torch.full((t, t), float("-inf")).triu(1)
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    attn = (probs @ v).transpose(0, 1).reshape(t, nh * vd)
    return lin(attn, "self_attn.o_proj.weight")


def has_qk_norm(cfg):
    return cfg["model_type"] in ("qwen3", "qwen3_moe") or cfg.get("use_qk_norm", False)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_interleaved(x):
    """modeling_glm4.py's rotate_half: (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(cfg, x, cos, sin):
    """apply_rotary_pos_emb of modeling_glm4.py (interleaved) / modeling_glm4_moe.py and the
    others (halves): the first cos.shape[-1] channels rotate, the rest pass."""
    if cfg["model_type"] == "glm4":
        cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)
        sin = sin[..., : sin.shape[-1] // 2].repeat_interleave(2, dim=-1)
    rotary_dim = cos.shape[-1]
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    rot = rotate_half_interleaved(x_rot) if cfg["model_type"] == "glm4" else rotate_half(x_rot)
    return torch.cat([x_rot * cos + rot * sin, x_pass], dim=-1)


def sigmoid_moe_block(cfg, w, p, hidden_states):
    """Glm4MoeMoE.forward (= DeepseekV3MoE.forward): Glm4MoeTopkRouter, route_tokens_to_experts,
    the experts' loop with index_add_, then the shared experts (batch of one)."""
    n_experts, top_k = cfg["n_routed_experts"], cfg["num_experts_per_tok"]
    n_group, topk_group = cfg["n_group"], cfg["topk_group"]
    router_logits = torch.nn.functional.linear(hidden_states.type(torch.float32),
                                               w[p + "mlp.gate.weight"].type(torch.float32))
    router_logits = router_logits.sigmoid()
    for_choice = router_logits + w[p + "mlp.gate.e_score_correction_bias"]
    group_scores = for_choice.view(-1, n_group, n_experts // n_group).topk(2, dim=-1)[0].sum(dim=-1)
    if n_group > topk_group:
        ranked = group_scores.sort(dim=-1, descending=True).values
        MIN_ROUTING_GAP[0] = min(MIN_ROUTING_GAP[0],
                                 float((ranked[:, topk_group - 1] - ranked[:, topk_group]).min()))
    group_idx = torch.topk(group_scores, k=topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    score_mask = (group_mask.unsqueeze(-1).expand(-1, n_group, n_experts // n_group)
                  .reshape(-1, n_experts))
    scores_for_choice = for_choice.masked_fill(~score_mask.bool(), 0.0)
    ranked = scores_for_choice.sort(dim=-1, descending=True).values
    MIN_ROUTING_GAP[0] = min(MIN_ROUTING_GAP[0], float((ranked[:, top_k - 1] - ranked[:, top_k]).min()))
    topk_indices = torch.topk(scores_for_choice, k=top_k, dim=-1, sorted=False)[1]
    topk_weights = router_logits.gather(1, topk_indices)
    if cfg["norm_topk_prob"]:
        denominator = topk_weights.sum(dim=-1, keepdim=True) + 1e-20
        topk_weights /= denominator
    topk_weights = topk_weights * cfg["routed_scaling_factor"]
    final = torch.zeros_like(hidden_states)
    expert_mask = torch.nn.functional.one_hot(topk_indices, num_classes=n_experts).permute(2, 1, 0)
    for expert_idx in range(n_experts):
        top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
        if token_idx.numel() == 0:
            continue
        current = mlp(hidden_states[token_idx], w, p + f"mlp.experts.{expert_idx}.")
        current = current * topk_weights[token_idx, top_k_pos, None]
        final.index_add_(0, token_idx, current.to(final.dtype))
    if cfg["n_shared_experts"]:
        final = final + mlp(hidden_states, w, p + "mlp.shared_experts.")
    return final


def mlp(x, w, prefix):
    lin = lambda x, name: torch.nn.functional.linear(x, w[prefix + name])
    return lin(torch.nn.functional.silu(lin(x, "gate_proj.weight")) * lin(x, "up_proj.weight"),
               "down_proj.weight")


MIN_ROUTING_GAP = [float("inf")]


def sparse_moe_block(cfg, w, p, hidden_states):
    """Qwen3MoeSparseMoeBlock.forward / Qwen2MoeSparseMoeBlock.forward (batch of one)."""
    num_experts, top_k = cfg["num_experts"], cfg["num_experts_per_tok"]
    router_logits = torch.nn.functional.linear(hidden_states, w[p + "mlp.gate.weight"])
    routing_weights = torch.nn.functional.softmax(router_logits, dim=1, dtype=torch.float)
    ranked = router_logits.sort(dim=-1, descending=True).values
    MIN_ROUTING_GAP[0] = min(MIN_ROUTING_GAP[0], float((ranked[:, top_k - 1] - ranked[:, top_k]).min()))
    routing_weights, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    if cfg["norm_topk_prob"]:
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
    routing_weights = routing_weights.to(hidden_states.dtype)
    final_hidden_states = torch.zeros_like(hidden_states)
    expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=num_experts).permute(2, 1, 0)
    for expert_idx in range(num_experts):
        idx, top_x = torch.where(expert_mask[expert_idx])
        current_state = hidden_states[None, top_x].reshape(-1, hidden_states.shape[-1])
        current_hidden_states = (mlp(current_state, w, p + f"mlp.experts.{expert_idx}.")
                                 * routing_weights[top_x, idx, None])
        final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
    if cfg.get("shared_expert_intermediate_size", 0):
        shared_expert_output = mlp(hidden_states, w, p + "mlp.shared_expert.")
        shared_expert_output = torch.sigmoid(torch.nn.functional.linear(
            hidden_states, w[p + "mlp.shared_expert_gate.weight"])) * shared_expert_output
        final_hidden_states = final_hidden_states + shared_expert_output
    return final_hidden_states


def forward(cfg, w, tokens):
    h = cfg["hidden_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim", h // nh)
    eps = cfg["rms_norm_eps"]
    t = len(tokens)
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    pos = torch.arange(t).float()
    scaling = 1.0
    if is_mla(cfg):  # DeepseekV3Config.head_dim is the RoPE part
        d = cfg["qk_rope_head_dim"]
    rotary_dim = int(d * cfg.get("partial_rotary_factor", 1.0))
    if cfg.get("rope_scaling") and cfg["rope_scaling"].get("rope_type") == "yarn":
        inv, scaling = yarn_inv_freq(cfg, rotary_dim)
    else:
        inv = inv_freq_of(cfg, rotary_dim)
    freqs = pos[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * scaling)[None], (emb.sin() * scaling)[None]  # [1, T, D]
    lin = lambda x, name: torch.nn.functional.linear(x, w[name], w.get(name.replace("weight", "bias")))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        res = x
        y = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        if is_mla(cfg):
            x = res + mla_attention(cfg, w, p, y, cos, sin)
            y = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            x = x + (sigmoid_moe_block(cfg, w, p, y) if is_moe_layer(cfg, i) else mlp(y, w, p + "mlp."))
            continue
        q = lin(y, p + "self_attn.q_proj.weight").view(t, nh, d)
        k = lin(y, p + "self_attn.k_proj.weight").view(t, nkv, d)
        v = lin(y, p + "self_attn.v_proj.weight").view(t, nkv, d)
        if has_qk_norm(cfg):
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [H, T, D]
        q = apply_rope(cfg, q, cos, sin)
        k = apply_rope(cfg, k, cos, sin)
        k = k.repeat_interleave(nh // nkv, dim=0)
        v = v.repeat_interleave(nh // nkv, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        scores = scores + torch.full((t, t), float("-inf")).triu(1)
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        attn = (probs @ v).transpose(0, 1).reshape(t, nh * d)
        if cfg["model_type"] == "glm4":  # Glm4DecoderLayer: the extra norms, fused gate_up_proj
            out = lin(attn, p + "self_attn.o_proj.weight")
            x = res + rms_norm(out, w[p + "post_self_attn_layernorm.weight"], eps)
            y = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            gate, up = lin(y, p + "mlp.gate_up_proj.weight").chunk(2, dim=-1)
            out = lin(up * torch.nn.functional.silu(gate), p + "mlp.down_proj.weight")
            x = x + rms_norm(out, w[p + "post_mlp_layernorm.weight"], eps)
            continue
        x = res + lin(attn, p + "self_attn.o_proj.weight")
        y = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        if is_moe_layer(cfg, i) and is_sigmoid_moe(cfg):
            x = x + sigmoid_moe_block(cfg, w, p, y)
            continue
        if is_moe_layer(cfg, i):
            x = x + sparse_moe_block(cfg, w, p, y)
            continue
        gate = lin(y, p + "mlp.gate_proj.weight")
        x = x + lin(torch.nn.functional.silu(gate) * lin(y, p + "mlp.up_proj.weight"),
                    p + "mlp.down_proj.weight")
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def main(out_dir, only):
    for seed, (name, cfg) in enumerate(CONFIGS.items()):
        if only and name not in only:
            continue
        d = os.path.join(out_dir, name)
        os.makedirs(d, exist_ok=True)
        w = make_weights(cfg, 100 + seed)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        write_safetensors(os.path.join(d, "model.safetensors"), w)
        with torch.no_grad():
            logits = torch.cat([forward(cfg, w, s) for s in SEQUENCES], dim=0)
        write_safetensors(os.path.join(d, "logits.safetensors"), {
            "logits": logits, "tokens": torch.tensor(sum(SEQUENCES, [])),
            "cu_seqlens": torch.tensor([0, 5, 14, 17])})
        print(name, tuple(logits.shape), float(logits.abs().max()))
    print("smallest gap between the k-th and the next router logit:", MIN_ROUTING_GAP[0])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/model/golden", sys.argv[2:])
