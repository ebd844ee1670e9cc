#!/usr/bin/env python3
"""HF transformers reads what vime writes (run on the GPU machine, which has torch and
transformers; scripts/gpu_test.sh runs it):

    python3 tools/parity/hf_export_parity.py --bin-dir build-gpu/bin --out DIR

1. `vime convert-hf` both ways: random-init tiny Qwen3, Qwen2 and Llama-3 (rope scaling) written by
   save_pretrained become vime checkpoints and come back as HF directories; transformers loads
   those and its logits match vime's own (vime_dump_logits on the vime checkpoint).
2. `vime train --save-hf`: one GRPO step on the tiny arithmetic task (make_arith_task), then
   transformers loads the HF copy of the trained actor and its logits match vime's on the
   checkpoint saved at the same step.
Prints one JSON line per check; exits 1 when a max abs logits difference (fp32 on CUDA) exceeds
--tolerance or a step fails.
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_parity import MODELS  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}",
              file=sys.stderr)
        sys.exit(1)
    return r.stdout


def compare(a, what, hf_dir, vime_dir, vocab, out):
    g = torch.Generator().manual_seed(3)
    seqs = [torch.randint(0, vocab, (n,), generator=g) for n in (23, 64, 5)]
    tokens = os.path.join(out, f"{what}_tokens.safetensors")
    cu = [0]
    for s in seqs:
        cu.append(cu[-1] + len(s))
    save_file({"tokens": torch.cat(seqs), "cu_seqlens": torch.tensor(cu)}, tokens)
    hf = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32,
                                              attn_implementation="eager").cuda().eval()
    with torch.no_grad():
        ref = torch.cat([hf(s[None].cuda()).logits[0].float() for s in seqs]).cpu()
    logits = os.path.join(out, f"{what}_vime_logits.safetensors")
    run([os.path.join(a.bin_dir, "vime_dump_logits"), vime_dir, tokens, logits, "float32", "cuda"])
    got = load_file(logits)["logits"][:, :ref.shape[1]]
    diff = float((got - ref).abs().max())
    print(json.dumps(dict(check=what, max_abs_diff=diff, max_abs_logit=float(ref.abs().max()),
                          argmax_agreement=float((got.argmax(-1) == ref.argmax(-1)).float().mean()))),
          flush=True)
    return diff <= a.tolerance


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tolerance", type=float, default=1e-4)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vime = os.path.join(a.bin_dir, "vime")
    ok = True
    torch.manual_seed(0)
    for name, (config_cls, model_cls, kwargs) in MODELS.items():
        model = model_cls(config_cls(**kwargs)).eval()
        with torch.no_grad():  # HF inits norms to 1; perturb them so they are tested
            for n, prm in model.named_parameters():
                if "norm" in n:
                    prm.add_(0.1 * torch.randn_like(prm))
        origin, ckpt = os.path.join(a.out, name), os.path.join(a.out, name + "_vime")
        exported = os.path.join(a.out, name + "_exported")
        model.save_pretrained(origin)
        untie = [] if kwargs["tie_word_embeddings"] else ["--untie-embeddings-and-output-weights"]
        run([vime, "convert-hf", "--hf-checkpoint", origin, "--save", ckpt] + untie)
        run([vime, "convert-hf", "--input-dir", os.path.join(ckpt, "iter_0000000"), "--output-dir",
             exported, "--origin-hf-dir", origin, "--vocab-size", str(kwargs["vocab_size"])])
        ok &= compare(a, f"convert-hf {name}", exported, os.path.join(ckpt, "iter_0000000"),
                      kwargs["vocab_size"], a.out)

    task, save = os.path.join(a.out, "task"), os.path.join(a.out, "train_ckpt")
    hf_copy = os.path.join(a.out, "train_hf", "rollout_{rollout_id}")
    run([os.path.join(a.bin_dir, "make_arith_task"), "--out", task])
    run([vime, "train", "--hf-checkpoint", os.path.join(task, "model"), "--prompt-data",
         os.path.join(task, "data", "train.jsonl"), "--input-key", "input", "--label-key", "label",
         "--rm-type", "math", "--advantage-estimator", "grpo", "--rollout-batch-size", "4",
         "--n-samples-per-prompt", "4", "--global-batch-size", "16",
         "--rollout-max-response-len", "8", "--lr", "1e-3", "--num-rollout", "1", "--save", save,
         "--save-interval", "1", "--save-hf", hf_copy])
    with open(os.path.join(task, "model", "config.json")) as f:
        vocab = json.load(f)["vocab_size"]
    ok &= compare(a, "train --save-hf", hf_copy.format(rollout_id=0),
                  os.path.join(save, "iter_0000000"), min(vocab, 1000), a.out)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
