#!/usr/bin/env python3
"""HF transformers generate() throughput on a random-init model of engine_bench's presets.

N prompts of P random tokens, M new tokens each (sampled, no EOS), one batch of N. Prints one JSON
line shaped like engine_bench's. No weights needed (AutoModelForCausalLM.from_config).
  python3 tools/engine_bench/hf_generate_bench.py --model qwen3-0.6b --prompts 256 \
      --prompt-len 128 --new-tokens 512 [--device cuda] [--batch 256]
"""
import argparse
import json
import time

import torch
from transformers import AutoModelForCausalLM, Qwen3Config


def preset(name):
    common = dict(vocab_size=151936, head_dim=128, num_key_value_heads=8, rope_theta=1000000.0,
                  rms_norm_eps=1e-6, tie_word_embeddings=True, max_position_embeddings=40960)
    shapes = {
        "qwen3-0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                           num_attention_heads=16),
        "qwen3-4b": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                         num_attention_heads=32),
        "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=16),
    }
    return Qwen3Config(**{**common, **shapes[name]})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="qwen3-0.6b")
    p.add_argument("--prompts", type=int, default=256)
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=512)
    p.add_argument("--batch", type=int, default=0, help="prompts per generate() call (0: all)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--temperature", type=float, default=1.0)
    a = p.parse_args()
    device = torch.device(a.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    config = preset(a.model)
    torch.manual_seed(1)
    model = AutoModelForCausalLM.from_config(config).to(device=device, dtype=dtype).eval()
    batch = a.batch or a.prompts
    gen = torch.Generator().manual_seed(3)

    def run(count, new_tokens):
        done = 0
        for start in range(0, count, batch):
            n = min(batch, count - start)
            ids = torch.randint(config.vocab_size, (n, a.prompt_len), generator=gen).to(device)
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                 temperature=a.temperature, top_p=1.0, top_k=0,
                                 max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                 eos_token_id=None, pad_token_id=0)
            done += (out.shape[1] - a.prompt_len) * n
        if device.type == "cuda":
            torch.cuda.synchronize()
        return done

    with torch.no_grad():
        run(min(a.prompts, 8), 8)  # warm-up
        start = time.perf_counter()
        generated = run(a.prompts, a.new_tokens)
        seconds = time.perf_counter() - start
    print(json.dumps({
        "system": "hf-transformers", "model": a.model, "device": a.device,
        "dtype": "bf16" if dtype == torch.bfloat16 else "fp32", "prompts": a.prompts,
        "prompt_len": a.prompt_len, "new_tokens": a.new_tokens, "batch": batch,
        "seconds": round(seconds, 3), "generated_tokens": generated,
        "tokens_per_s": round(generated / seconds, 1),
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
    }))


if __name__ == "__main__":
    main()
