#!/usr/bin/python3
"""Writes the tiny-model goldens of tests/model (run with Debian's python3-torch on CPU):

    /usr/bin/python3 tools/parity/make_tiny_goldens.py tests/model/golden

For each of a tiny Qwen3, Qwen2 and Llama-3 (rope scaling) config: random fp32 weights in an HF
directory (config.json + model.safetensors), and the reference logits of three packed sequences in
logits.safetensors, computed by a plain PyTorch port of HF transformers' eager modeling code
(modeling_qwen3.py / modeling_qwen2.py / modeling_llama.py). The GPU parity script
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
}

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


def make_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    h, f = cfg["hidden_size"], cfg["intermediate_size"]
    d = cfg.get("head_dim", h // cfg["num_attention_heads"])
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d
    rnd = lambda *shape: torch.randn(*shape, generator=g) * 0.2
    norm = lambda n: 1.0 + 0.1 * torch.randn(n, generator=g)
    w = {"model.embed_tokens.weight": rnd(cfg["vocab_size"], h)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(h)
        w[p + "self_attn.q_proj.weight"] = rnd(q, h)
        w[p + "self_attn.k_proj.weight"] = rnd(kv, h)
        w[p + "self_attn.v_proj.weight"] = rnd(kv, h)
        if cfg["model_type"] == "qwen2":
            w[p + "self_attn.q_proj.bias"] = rnd(q)
            w[p + "self_attn.k_proj.bias"] = rnd(kv)
            w[p + "self_attn.v_proj.bias"] = rnd(kv)
        w[p + "self_attn.o_proj.weight"] = rnd(h, q)
        if cfg["model_type"] == "qwen3":
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(h)
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


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def forward(cfg, w, tokens):
    h = cfg["hidden_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim", h // nh)
    eps = cfg["rms_norm_eps"]
    t = len(tokens)
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    pos = torch.arange(t).float()
    freqs = pos[:, None] * inv_freq_of(cfg, d)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]  # [1, T, D]
    lin = lambda x, name: torch.nn.functional.linear(x, w[name], w.get(name.replace("weight", "bias")))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        res = x
        y = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = lin(y, p + "self_attn.q_proj.weight").view(t, nh, d)
        k = lin(y, p + "self_attn.k_proj.weight").view(t, nkv, d)
        v = lin(y, p + "self_attn.v_proj.weight").view(t, nkv, d)
        if cfg["model_type"] == "qwen3":
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [H, T, D]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, dim=0)
        v = v.repeat_interleave(nh // nkv, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        scores = scores + torch.full((t, t), float("-inf")).triu(1)
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        attn = (probs @ v).transpose(0, 1).reshape(t, nh * d)
        x = res + lin(attn, p + "self_attn.o_proj.weight")
        y = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = lin(y, p + "mlp.gate_proj.weight")
        x = x + lin(torch.nn.functional.silu(gate) * lin(y, p + "mlp.up_proj.weight"),
                    p + "mlp.down_proj.weight")
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def main(out_dir):
    for seed, (name, cfg) in enumerate(CONFIGS.items()):
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/model/golden")
