#!/usr/bin/env python3
"""The HF transformers + torch eager baseline of tools/bench/bench_train.cpp: the same Qwen3 shape
(random weights), the same tokens per step as equal-length sequences, fp32 master weights with
bf16 autocast, the same fp32 log-prob loss, torch AdamW (fused). Prints one JSON line.

Under torchrun (WORLD_SIZE > 1) it is the FSDP2 baseline of `vime_bench_train --gpus N
--use-distributed-optimizer`: every decoder layer and the root fully_shard-ed with bf16 compute and
fp32 gradient reduction (torchtitan's and prime-rl's setup), each rank taking --tokens; rank 0
prints the line, tokens/s summed over the ranks. --recompute-layers N checkpoints only the first N
layers (vime's --recompute-layers)."""
import argparse
import json
import os
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
    p.add_argument("--recompute-layers", type=int, default=0, help="only the first N layers")
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, default=989.0)
    p.add_argument("--forward-only", action="store_true", help="the no-grad log-prob pass instead")
    p.add_argument("--profile", default="", help="one more step under torch.profiler -> Chrome trace")
    a = p.parse_args()
    cfg = Qwen3Config(vocab_size=151936, num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-6,
                      rope_theta=1000000.0, tie_word_embeddings=True, **PRESETS[a.model])
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        torch.distributed.init_process_group("nccl")
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM._from_config(cfg, attn_implementation="sdpa").train()
    a.recompute = a.recompute or a.recompute_layers > 0
    if a.recompute:
        model.gradient_checkpointing_enable()
        for layer in model.model.layers[a.recompute_layers or len(model.model.layers):]:
            layer.gradient_checkpointing = False
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=world == 1)
    if world > 1:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model.model.layers:
            fully_shard(layer, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (a.tokens // a.seq_len, a.seq_len), device="cuda")

    def forward_only():
        with torch.no_grad(), autocast:
            logits = model(input_ids=ids).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None])
        return -lp.mean().item()

    def train_step():
        with autocast:
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
    if rank != 0:
        torch.distributed.destroy_process_group()
        return
    print(json.dumps(dict(impl="hf_eager" if world == 1 else "hf_fsdp2", model=a.model,
                          gpus=world, recompute=a.recompute, recompute_layers=a.recompute_layers,
                          forward_only=a.forward_only, tokens=a.tokens,
                          seq_len=a.seq_len, step_ms=round(dt * 1e3, 2),
                          tokens_per_s=round(a.tokens * world / dt, 1),
                          tflops=round(flops / dt / 1e12, 1),
                          mfu=round(flops / dt / 1e12 / a.peak_tflops, 4), loss=round(loss, 4),
                          peak_mem_gb=round(torch.cuda.max_memory_allocated() / 2**30, 1))),
          flush=True)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
