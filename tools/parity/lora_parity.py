#!/usr/bin/env python3
"""Logits parity of vime's LoRA adapters against HF transformers + PEFT (run on the GPU machine):

    python3 tools/parity/lora_parity.py --vime-dump build-gpu/bin/vime_dump_logits --out DIR [--tp N]

For random-init tiny Qwen3 and Qwen2 configs (as hf_parity.py), attaches a random LoRA adapter
(r 8, alpha 16, every linear or a subset; lora_B drawn at random so the adapter matters), computes
HF's logits of each sequence alone (eager attention), writes the adapter in PEFT's files, and runs
vime_dump_logits on the base + that adapter dir (vime applies it as adapters, unmerged). Prints
one JSON line per model, dtype and target set with the max abs logits difference; exits 1 when
fp32 exceeds --fp32-tolerance (1e-5).

With PEFT installed the adapter is PEFT's own (get_peft_model, save_pretrained). Without it, PEFT's
LoRA math (peft/tuners/lora/layer.py Linear.forward: result + lora_B(lora_A(dropout(x))) * scaling,
scaling = lora_alpha / r) is applied by forward hooks on the targeted nn.Linear modules and the
files are written under PEFT's names (base_model.model.<module>.lora_A.weight / lora_B.weight);
the report line says which ("peft": true/false).
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_parity import LENGTHS, MODELS, write_tokens  # noqa: E402

RANK, ALPHA = 8, 16
TARGETS = {
    "all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "qv_down": ["q_proj", "v_proj", "down_proj"],
}

try:
    import peft  # noqa: F401
    HAVE_PEFT = True
except ImportError:
    HAVE_PEFT = False


def attach_by_hand(model, targets, adapter_dir, seed):
    """PEFT's LoRA on `model` by forward hooks; writes PEFT's adapter files."""
    g = torch.Generator().manual_seed(seed)
    tensors, hooks = {}, []
    scale = ALPHA / RANK
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or name.split(".")[-1] not in targets:
            continue
        a = (torch.rand(RANK, module.in_features, generator=g) * 2 - 1) / module.in_features**0.5
        b = torch.randn(module.out_features, RANK, generator=g) * 0.05
        tensors[f"base_model.model.{name}.lora_A.weight"] = a
        tensors[f"base_model.model.{name}.lora_B.weight"] = b

        def hook(mod, inputs, output, a=a, b=b):
            x = inputs[0]
            lora = torch.nn.functional.linear(
                torch.nn.functional.linear(x, a.to(x.device, x.dtype)), b.to(x.device, x.dtype))
            return output + lora * scale

        hooks.append(module.register_forward_hook(hook))
    os.makedirs(adapter_dir, exist_ok=True)
    save_file(tensors, os.path.join(adapter_dir, "adapter_model.safetensors"),
              metadata={"format": "pt"})
    with open(os.path.join(adapter_dir, "adapter_config.json"), "w") as f:
        json.dump(dict(peft_type="LORA", task_type="CAUSAL_LM", r=RANK, lora_alpha=ALPHA,
                       lora_dropout=0.0, target_modules=targets, bias="none",
                       base_model_name_or_path=""), f)
    return model


def attach_with_peft(model, targets, adapter_dir, seed):
    from peft import LoraConfig, get_peft_model
    config = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=targets,
                        task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    model.save_pretrained(adapter_dir)
    return model.eval()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vime-dump", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--fp32-tolerance", type=float, default=1e-5)
    p.add_argument("--tp", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    seqs, tokens_path = write_tokens(a.out)
    failed = False
    for name in ("qwen3", "qwen2"):
        config_cls, model_cls, kwargs = MODELS[name]
        base = model_cls(config_cls(**kwargs)).eval()
        with torch.no_grad():
            for n, prm in base.named_parameters():
                if "norm" in n:
                    prm.add_(0.1 * torch.randn_like(prm))
        model_dir = os.path.join(a.out, name)
        base.save_pretrained(model_dir)
        # The base alone first: the bar the adapted model is held to sits on top of it.
        hf_base = model_cls.from_pretrained(model_dir, dtype=torch.float32,
                                            attn_implementation="eager").cuda().eval()
        with torch.no_grad():
            base_ref = torch.cat([hf_base(s[None].cuda()).logits[0].float() for s in seqs]).cpu()
        del hf_base
        base_out = os.path.join(a.out, f"{name}_base_logits.safetensors")
        subprocess.run([a.vime_dump, model_dir, tokens_path, base_out, "float32", "cuda",
                        str(a.tp)], check=True)
        print(json.dumps(dict(model=name, targets="none (base)", dtype="float32", tp=a.tp,
                              max_abs_diff=float((load_file(base_out)["logits"] - base_ref)
                                                 .abs().max()))), flush=True)
        for target_name, targets in TARGETS.items():
            adapter_dir = os.path.join(a.out, f"{name}_{target_name}_adapter")
            hf = model_cls.from_pretrained(model_dir, dtype=torch.float32,
                                           attn_implementation="eager").eval()
            attach = attach_with_peft if HAVE_PEFT else attach_by_hand
            hf = attach(hf, targets, adapter_dir, seed=7).cuda().eval()
            with torch.no_grad():
                ref = torch.cat([hf(s[None].cuda()).logits[0].float() for s in seqs]).cpu()
            out_path = os.path.join(a.out, f"{name}_{target_name}_logits.safetensors")
            r = subprocess.run([a.vime_dump, model_dir, tokens_path, out_path, "float32", "cuda",
                                str(a.tp), adapter_dir], capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                sys.exit(r.returncode)
            got = load_file(out_path)["logits"]
            diff = (got - ref).abs()
            report = dict(model=name, targets=target_name, dtype="float32", tp=a.tp,
                          peft=HAVE_PEFT, max_abs_diff=float(diff.max()),
                          mean_abs_diff=float(diff.mean()), max_abs_logit=float(ref.abs().max()),
                          tokens=int(sum(LENGTHS)))
            print(json.dumps(report), flush=True)
            if report["max_abs_diff"] > a.fp32_tolerance:
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
