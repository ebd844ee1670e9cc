#!/usr/bin/env python3
"""The HF transformers + torch eager baseline of tools/bench/bench_train.cpp: the same Qwen3 shape
(random weights), the same tokens per step as equal-length sequences, fp32 master weights with
bf16 autocast, the same fp32 log-prob loss, torch AdamW (fused). Prints one JSON line."""
import argparse
import json
import time

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

PRESETS = {
    "qwen3-0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16),
    "qwen3-4b": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                     num_attention_heads=32),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="qwen3-0.6b")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--recompute", action="store_true")
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, default=989.0)
    p.add_argument("--forward-only", action="store_true", help="the no-grad log-prob pass instead")
    p.add_argument("--profile", default="", help="one more step under torch.profiler -> Chrome trace")
    a = p.parse_args()
    cfg = Qwen3Config(vocab_size=151936, num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-6,
                      rope_theta=1000000.0, tie_word_embeddings=True, **PRESETS[a.model])
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM._from_config(cfg, attn_implementation="sdpa").train()
    if a.recompute:
        model.gradient_checkpointing_enable()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (a.tokens // a.seq_len, a.seq_len), device="cuda")

    def forward_only():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None])
        return -lp.mean().item()

    def train_step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits
        lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None])
        loss = -lp.mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    step = forward_only if a.forward_only else train_step
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.iters):
        loss = step()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / a.iters
    if a.profile:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(a.profile)
    h, f, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    q, kv = cfg.num_attention_heads * 128, 8 * 128
    matmul = L * (h * (q + 2 * kv) + q * h + 3 * h * f) + cfg.vocab_size * h
    passes = 2 if a.forward_only else 6  # FLOPs per weight per token: forward 2, + backward 4
    flops = passes * matmul * a.tokens + passes * L * q * (a.tokens // a.seq_len) * a.seq_len ** 2
    print(json.dumps(dict(impl="hf_eager", model=a.model, recompute=a.recompute,
                          forward_only=a.forward_only, tokens=a.tokens,
                          seq_len=a.seq_len, step_ms=round(dt * 1e3, 2),
                          tokens_per_s=round(a.tokens / dt, 1), tflops=round(flops / dt / 1e12, 1),
                          mfu=round(flops / dt / 1e12 / a.peak_tflops, 4), loss=round(loss, 4),
                          peak_mem_gb=round(torch.cuda.max_memory_allocated() / 2**30, 1))),
          flush=True)


if __name__ == "__main__":
    main()
