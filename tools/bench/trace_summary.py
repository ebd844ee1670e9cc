#!/usr/bin/env python3
"""Summarises a Chrome trace of one training step (vime_bench_train --profile, or
hf_train_step.py --profile) as the table tools/results/ keeps: GPU time per kernel class and per
ATen op, GPU idle share of the step, kernel launches and host syncs.
    trace_summary.py TRACE.json [--label NAME] [--top 15] [--json OUT.jsonl]"""
import argparse
import collections
import json
import re

CLASSES = [
    ("gemm", r"gemm|xmma|cutlass|nvjet|cublas|sm90_|ampere_|s16816"),
    ("attention", r"flash|fmha|attention|attn"),
    ("nccl", r"nccl"),
    ("optimizer", r"adam|multi_tensor|foreach"),
    ("softmax/logsumexp", r"softmax|logsumexp"),
    ("norm", r"norm"),
    ("reduce", r"reduce"),
    ("copy/cat", r"copy|cat|Cat|transpose|contiguous"),
    ("index/gather", r"index|gather|scatter"),
    ("elementwise", r"elementwise|vectorized|unrolled|pointwise"),
]


def kernel_class(name):
    for label, pattern in CLASSES:
        if re.search(pattern, name):
            return label
    return "other"


def union_length(intervals):
    total, end = 0.0, float("-inf")
    for s, e in sorted(intervals):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--label", default="")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", default="")
    a = p.parse_args()
    doc = json.load(open(a.trace))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    ops = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ext = (e.get("args") or {}).get("External id")
            if ext is not None:
                ops[ext] = e["name"]
    runtime = collections.Counter(e["name"] for e in events
                                  if e.get("ph") == "X" and e.get("cat") == "cuda_runtime")
    if not gpu:
        print(json.dumps(dict(label=a.label, error="no GPU events in trace")))
        return
    start = min(e["ts"] for e in gpu)
    end = max(e["ts"] + e["dur"] for e in gpu)
    span = end - start
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    by_class, by_op, by_kernel = collections.Counter(), collections.Counter(), collections.Counter()
    counts = collections.Counter()
    for e in gpu:
        name = e["name"]
        by_class[kernel_class(name) if e["cat"] == "kernel" else e["cat"]] += e["dur"]
        op = ops.get((e.get("args") or {}).get("External id"), "(no op)")
        by_op[op] += e["dur"]
        short = name[:90]
        by_kernel[short] += e["dur"]
        counts[short] += 1
    total = sum(e["dur"] for e in gpu)
    print(f"== {a.label or a.trace}: GPU span {span / 1e3:.1f} ms, busy {busy / 1e3:.1f} ms "
          f"(idle {100 * (1 - busy / span):.1f}%), {len(gpu)} GPU events, "
          f"launches {runtime.get('cudaLaunchKernel', 0) + runtime.get('cudaLaunchKernelExC', 0)}, "
          f"host syncs {runtime.get('cudaStreamSynchronize', 0) + runtime.get('cudaDeviceSynchronize', 0)}"
          f", D2H/H2D memcpy calls {runtime.get('cudaMemcpyAsync', 0)}")
    print("-- by kernel class (ms, share of GPU time)")
    for k, v in by_class.most_common():
        print(f"  {k:<22} {v / 1e3:9.2f}  {100 * v / total:5.1f}%")
    print(f"-- by ATen op, top {a.top}")
    for k, v in by_op.most_common(a.top):
        print(f"  {k[:60]:<60} {v / 1e3:9.2f}  {100 * v / total:5.1f}%")
    print(f"-- by kernel, top {a.top} (ms, calls)")
    for k, v in by_kernel.most_common(a.top):
        print(f"  {k:<90} {v / 1e3:8.2f} {counts[k]:6d}")
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(dict(label=a.label, span_ms=span / 1e3, busy_ms=busy / 1e3,
                                    gpu_events=len(gpu), runtime=dict(runtime),
                                    by_class={k: v / 1e3 for k, v in by_class.items()},
                                    by_op={k: v / 1e3 for k, v in by_op.most_common(40)})) + "\n")


if __name__ == "__main__":
    main()
