#!/usr/bin/env python3
"""Writes a random-init HF model directory of one of engine_bench's presets, with HF's own writer
(save_pretrained: config.json + safetensors), and the tokenizer files of --tokenizer-dir, so that
`vime train --hf-checkpoint DIR` runs on a real-shaped model without downloading weights.
  python3 tools/engine_bench/make_hf_model.py --model qwen3-0.6b --tokenizer-dir T --out DIR
"""
import argparse
import json
import os
import shutil

import torch
from transformers import AutoModelForCausalLM

from hf_generate_bench import preset


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="qwen3-0.6b")
    p.add_argument("--tokenizer-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", default="bfloat16")
    a = p.parse_args()
    torch.manual_seed(0)
    config = preset(a.model)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=getattr(torch, a.dtype))
    model.save_pretrained(a.out, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src = os.path.join(a.tokenizer_dir, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(a.out, name))
    # Qwen3's chat models end a turn with <|im_end|> (151645) as well as <|endoftext|> (151643).
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [151645, 151643], "pad_token_id": 151643}, f)
    print(json.dumps({"model": a.model, "out": a.out, "params": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    main()
