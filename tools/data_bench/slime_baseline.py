#!/usr/bin/env python3
"""The Python side of tools/data_bench: slime's prompt pipeline on the same file, timed.

Mirrors slime/utils/data.py::Dataset and slime/rollout/data_source.py::RolloutDataSource:
read the JSONL (pandas.read_json(lines=True) when pandas is installed, else json.loads per line),
build one Sample per row, shuffle with random.Random(seed + epoch), and hand out groups of
n deep-copied samples per prompt. Sample is a dataclass with slime's fields (slime/utils/types.py).
Prints one JSON object: seconds per phase and, for an order cross-check, the first prompt ids of
each epoch.
usage: slime_baseline.py FILE EPOCHS BATCH N SEED"""
import copy
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class Sample:
    group_index: Optional[int] = None
    index: Optional[int] = None
    prompt: Any = ""
    tokens: list = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    label: Any = None
    reward: Any = None
    loss_mask: Optional[list] = None
    weight_versions: list = field(default_factory=list)
    rollout_log_probs: Optional[list] = None
    status: str = "pending"
    metadata: dict = field(default_factory=dict)


def read_rows(path):
    try:
        import pandas as pd

        df = pd.read_json(path, lines=True, dtype={"label": str})
        return [row.to_dict() for _, row in df.iterrows()], "pandas"
    except ImportError:
        rows = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
        return rows, "json"


def main():
    path, epochs, batch, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    t0 = time.perf_counter()
    rows, reader = read_rows(path)
    origin = [Sample(prompt=r["prompt"], label=r["label"], metadata=r.get("metadata") or {}) for r in rows]
    t_load = time.perf_counter() - t0

    heads = []
    group_index = index = 0
    t0 = time.perf_counter()
    for epoch in range(epochs):
        perm = list(range(len(origin)))
        random.Random(seed + epoch).shuffle(perm)
        samples = [origin[i] for i in perm]
        heads.append([s.metadata["id"] for s in samples[:20]])
        for start in range(0, len(samples) - batch + 1, batch):
            for prompt in samples[start:start + batch]:
                for _ in range(n):
                    s = copy.deepcopy(prompt)
                    s.group_index = group_index
                    s.index = index
                    index += 1
                group_index += 1
    t_serve = time.perf_counter() - t0
    print(json.dumps({"reader": reader, "load_s": t_load, "serve_s": t_serve, "groups": group_index,
                      "samples": index, "epoch_heads": heads}))


if __name__ == "__main__":
    main()
