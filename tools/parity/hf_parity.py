#!/usr/bin/env python3
"""Logits parity of vime against HF transformers (run on the GPU machine, which has torch and
transformers but no weights):

    python3 tools/parity/hf_parity.py --vime-dump build-gpu/bin/vime_dump_logits --out DIR [--tp N]

For random-init tiny Qwen3, Qwen2, Llama-3 (rope scaling), Qwen3-MoE (top-8 of 128 experts
renormalised; top-4 of 16 not renormalised with a dense mlp_only layer), Qwen2-MoE (a gated
shared expert), GLM-4 (partial interleaved rotary, extra norms), GLM-4.5 (sigmoid routing with
a nonzero correction bias, 4 groups of which 2 are kept, routed scaling, a dense first layer, a
shared expert, QK norm; and plain sigmoid routing) and DeepSeek-V3 (multi-head latent attention:
q_proj with YaRN scaling, and the q_a/q_b low-rank query without scaling, both dense; and group-limited sigmoid MoE) configs
saved with save_pretrained,
packs a few sequences of different lengths, runs HF (each sequence alone, eager attention) and
vime (one packed varlen batch) in fp32 and bf16 on CUDA, and prints one JSON line per model and
dtype with the max abs logits difference. Exits 1 when fp32 exceeds --fp32-tolerance. --tp N: vime
runs at tensor-parallel size N (N local ranks, one GPU each), its logits gathered from the shards.
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import (DeepseekV3Config, DeepseekV3ForCausalLM, Glm4Config, Glm4ForCausalLM,
                          Glm4MoeConfig, Glm4MoeForCausalLM, LlamaConfig, LlamaForCausalLM,
                          Qwen2Config, Qwen2ForCausalLM,
                          Qwen2MoeConfig, Qwen2MoeForCausalLM, Qwen3Config, Qwen3ForCausalLM,
                          Qwen3MoeConfig, Qwen3MoeForCausalLM)

COMMON = dict(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=3,
              num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096,
              rms_norm_eps=1e-6)
MODELS = {
    "qwen3": (Qwen3Config, Qwen3ForCausalLM,
              dict(COMMON, head_dim=64, rope_theta=1000000.0, tie_word_embeddings=True)),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM,
              dict(COMMON, rope_theta=1000000.0, tie_word_embeddings=False)),
    "llama": (LlamaConfig, LlamaForCausalLM,
              dict(COMMON, rope_theta=500000.0, tie_word_embeddings=False,
                   rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                     high_freq_factor=4.0,
                                     original_max_position_embeddings=64))),
    "qwen3_moe_top8_of_128": (Qwen3MoeConfig, Qwen3MoeForCausalLM,
                              dict(COMMON, head_dim=64, rope_theta=1000000.0,
                                   tie_word_embeddings=False, num_experts=128,
                                   num_experts_per_tok=8, moe_intermediate_size=64,
                                   norm_topk_prob=True, decoder_sparse_step=1,
                                   mlp_only_layers=[])),
    "qwen3_moe_no_norm_mlp_only": (Qwen3MoeConfig, Qwen3MoeForCausalLM,
                                   dict(COMMON, head_dim=64, rope_theta=1000000.0,
                                        tie_word_embeddings=False, num_experts=16,
                                        num_experts_per_tok=4, moe_intermediate_size=128,
                                        norm_topk_prob=False, decoder_sparse_step=1,
                                        mlp_only_layers=[1])),
    "qwen2_moe_shared_expert": (Qwen2MoeConfig, Qwen2MoeForCausalLM,
                                dict(COMMON, rope_theta=1000000.0, tie_word_embeddings=False,
                                     num_experts=16, num_experts_per_tok=4,
                                     moe_intermediate_size=128,
                                     shared_expert_intermediate_size=256, norm_topk_prob=False,
                                     decoder_sparse_step=1, mlp_only_layers=[])),
    "glm4": (Glm4Config, Glm4ForCausalLM,
             dict(COMMON, head_dim=32, partial_rotary_factor=0.5, attention_bias=True,
                  rope_theta=10000.0, tie_word_embeddings=False)),
    "glm4_moe_groups": (Glm4MoeConfig, Glm4MoeForCausalLM,
                        dict(COMMON, head_dim=32, partial_rotary_factor=0.5, attention_bias=True,
                             use_qk_norm=True, rope_theta=1000000.0, tie_word_embeddings=False,
                             n_routed_experts=16, num_experts_per_tok=4, moe_intermediate_size=64,
                             n_shared_experts=1, n_group=4, topk_group=2,
                             routed_scaling_factor=2.5, norm_topk_prob=True,
                             first_k_dense_replace=1)),
    "glm4_moe_sigmoid_plain": (Glm4MoeConfig, Glm4MoeForCausalLM,
                               dict(COMMON, head_dim=32, partial_rotary_factor=1.0,
                                    attention_bias=False, use_qk_norm=False,
                                    rope_theta=10000.0, tie_word_embeddings=True,
                                    n_routed_experts=8, num_experts_per_tok=2,
                                    moe_intermediate_size=64, n_shared_experts=1, n_group=1,
                                    topk_group=1, routed_scaling_factor=1.0,
                                    norm_topk_prob=False, first_k_dense_replace=0)),
    "deepseek_v3_mla_yarn": (DeepseekV3Config, DeepseekV3ForCausalLM,
                             dict(COMMON, num_key_value_heads=8, q_lora_rank=None, kv_lora_rank=64,
                                  qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=48,
                                  n_routed_experts=8, n_group=1, topk_group=1,
                                  num_experts_per_tok=2, moe_intermediate_size=64,
                                  first_k_dense_replace=3, rope_theta=10000.0,
                                  rope_scaling=dict(rope_type="yarn", factor=8.0,
                                                    original_max_position_embeddings=64,
                                                    beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                                                    mscale_all_dim=0.8),
                                  tie_word_embeddings=False)),
    "deepseek_v3_mla_q_lora": (DeepseekV3Config, DeepseekV3ForCausalLM,
                               dict(COMMON, num_key_value_heads=8, q_lora_rank=96, kv_lora_rank=64,
                                    qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32,
                                    n_routed_experts=8, n_group=1, topk_group=1,
                                    num_experts_per_tok=2, moe_intermediate_size=64,
                                    first_k_dense_replace=3, rope_theta=50000.0,
                                    tie_word_embeddings=False)),
    "deepseek_v3_moe_groups": (DeepseekV3Config, DeepseekV3ForCausalLM,
                               dict(COMMON, num_key_value_heads=8, q_lora_rank=96, kv_lora_rank=64,
                                    qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32,
                                    n_routed_experts=16, n_group=4, topk_group=2,
                                    num_experts_per_tok=4, moe_intermediate_size=64,
                                    n_shared_experts=1, routed_scaling_factor=2.5,
                                    norm_topk_prob=True, first_k_dense_replace=1,
                                    rope_theta=10000.0,
                                    rope_scaling=dict(rope_type="yarn", factor=40.0,
                                                      original_max_position_embeddings=64,
                                                      beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                                                      mscale_all_dim=1.0),
                                    tie_word_embeddings=False)),
}
LENGTHS = [37, 200, 5, 129]


def write_tokens(out):
    """Seeds torch, draws the LENGTHS sequences and writes them packed for vime_dump_logits."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    seqs = [torch.randint(0, COMMON["vocab_size"], (n,), generator=g) for n in LENGTHS]
    tokens_path = os.path.join(out, "tokens.safetensors")
    cu = [0]
    for s in seqs:
        cu.append(cu[-1] + len(s))
    save_file({"tokens": torch.cat(seqs), "cu_seqlens": torch.tensor(cu)}, tokens_path)
    return seqs, tokens_path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vime-dump", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--fp32-tolerance", type=float, default=1e-4)
    p.add_argument("--tp", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    seqs, tokens_path = write_tokens(a.out)
    failed = False
    for name, (config_cls, model_cls, kwargs) in MODELS.items():
        config = config_cls(**kwargs)
        model = model_cls(config).eval()
        with torch.no_grad():  # HF inits norms to 1; perturb them so they are tested
            for n, prm in model.named_parameters():
                if "norm" in n:
                    prm.add_(0.1 * torch.randn_like(prm))
                if n.endswith("mlp.gate.weight"):  # a decisive router: bf16 rounding flips no choice
                    prm.mul_(10.0)
            for n, buf in model.named_buffers():  # GLM-4.5's fp32 correction bias: nonzero
                if n.endswith("e_score_correction_bias"):
                    buf.add_(0.1 * torch.randn_like(buf))
        model_dir = os.path.join(a.out, name)
        model.save_pretrained(model_dir)
        for dtype_name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
            hf = model_cls.from_pretrained(model_dir, dtype=dtype,
                                           attn_implementation="eager").cuda().eval()
            with torch.no_grad():
                ref = torch.cat([hf(s[None].cuda()).logits[0].float() for s in seqs]).cpu()
            out_path = os.path.join(a.out, f"{name}_{dtype_name}_logits.safetensors")
            r = subprocess.run([a.vime_dump, model_dir, tokens_path, out_path, dtype_name, "cuda",
                                str(a.tp)], capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                sys.exit(r.returncode)
            got = load_file(out_path)["logits"]
            diff = (got - ref).abs()
            report = dict(model=name, dtype=dtype_name, tp=a.tp, max_abs_diff=float(diff.max()),
                          mean_abs_diff=float(diff.mean()), max_abs_logit=float(ref.abs().max()),
                          argmax_agreement=float((got.argmax(-1) == ref.argmax(-1)).float().mean()),
                          tokens=int(sum(LENGTHS)))
            print(json.dumps(report), flush=True)
            if dtype == torch.float32 and report["max_abs_diff"] > a.fp32_tolerance:
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
