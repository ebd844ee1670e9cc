#!/usr/bin/python3
"""A reader of HF model directories that shares no code with vime: the logits of an HF directory
(config.json, model.safetensors or a sharded index) for packed sequences, in fp32 on the CPU, by
the plain PyTorch port of HF transformers' eager modeling code in make_tiny_goldens.py. Run with
Debian's python3-torch (no transformers, no safetensors package):

    /usr/bin/python3 tools/parity/torch_logits.py MODEL_DIR TOKENS.safetensors OUT.safetensors

TOKENS holds "tokens" [total] int64 and "cu_seqlens" [num_seqs + 1] int64 (as for
vime_dump_logits); OUT gets "logits" [total, vocab_size] fp32. Checks what HF's from_pretrained
checks: every tensor the config implies is there with its shape, and no other tensor is. Exits 1
with one line naming the tensor or file otherwise.
"""
import json
import os
import struct
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_goldens import forward, write_safetensors  # noqa: E402

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16, "I64": torch.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        t = torch.frombuffer(bytearray(body[begin:end]), dtype=dtype) if end > begin else \
            torch.empty(0, dtype=dtype)
        out[name] = t.reshape(info["shape"])
    return out


def read_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for name in files:
        weights.update(read_safetensors(os.path.join(model_dir, name)))
    return {k: v.float() for k, v in weights.items()}


def expected_shapes(cfg):
    h, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or h // nh
    bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    shapes = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    if not cfg.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = [v, h]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({
            p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
            p + "self_attn.q_proj.weight": [nh * d, h], p + "self_attn.k_proj.weight": [nkv * d, h],
            p + "self_attn.v_proj.weight": [nkv * d, h], p + "self_attn.o_proj.weight": [h, nh * d],
            p + "mlp.gate_proj.weight": [f, h], p + "mlp.up_proj.weight": [f, h],
            p + "mlp.down_proj.weight": [h, f]})
        if bias:
            shapes.update({p + "self_attn.q_proj.bias": [nh * d], p + "self_attn.k_proj.bias":
                           [nkv * d], p + "self_attn.v_proj.bias": [nkv * d]})
        if cfg["model_type"] == "qwen3":
            shapes.update({p + "self_attn.q_norm.weight": [d], p + "self_attn.k_norm.weight": [d]})
    return shapes


def main(model_dir, tokens_path, out_path):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("model_type") not in ("qwen2", "qwen3", "llama"):
        sys.exit(f"{model_dir}/config.json: model_type {cfg.get('model_type')!r} is not one this "
                 "reader ports (qwen2, qwen3, llama)")
    w = read_weights(model_dir)
    shapes = expected_shapes(cfg)
    for name, shape in shapes.items():
        if name not in w:
            sys.exit(f"{model_dir}: tensor {name} missing")
        if list(w[name].shape) != shape:
            sys.exit(f"{model_dir}: tensor {name} has shape {list(w[name].shape)}, config.json "
                     f"implies {shape}")
    extra = sorted(set(w) - set(shapes))
    if extra:
        sys.exit(f"{model_dir}: tensors config.json does not use: {', '.join(extra[:5])}")
    packed = read_safetensors(tokens_path)
    tokens, cu = packed["tokens"].tolist(), packed["cu_seqlens"].tolist()
    with torch.no_grad():
        logits = torch.cat([forward(cfg, w, tokens[cu[i]:cu[i + 1]]) for i in range(len(cu) - 1)])
    write_safetensors(out_path, {"logits": logits.float().contiguous()})


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
