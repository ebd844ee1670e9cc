#!/usr/bin/env python3
"""Writes metric_goldens.json for tests/metrics: what CPython, numpy and zlib say for the pieces
of slime's rollout metrics (ray/rollout.py). Run with Debian's python3 (python3-numpy):
    /usr/bin/python3 tests/metrics/goldens/make_metric_goldens.py
Oracles: math.comb (exact pass@k), numpy (mean/median), zlib (compression ratio), round()/str()."""
import json
import math
import os
import random
import zlib
from fractions import Fraction

import numpy as np

rng = random.Random(20260101)

# pass@k = 1 - C(n-c, k) / C(n, k), exactly.
pass_at_k = []
for n in [1, 2, 3, 4, 5, 8, 16, 20, 64]:
    for c in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
        if c < 0 or c > n:
            continue
        for k in [1, 2, 4, 8, 16, 32, 64]:
            if k > n:
                continue
            exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
            pass_at_k.append({"n": n, "c": c, "k": k, "value": float(exact)})

# Groups of rewards -> mean pass@k over groups (numpy mean of the exact per-group values).
grouped = []
for _ in range(12):
    group_size = rng.choice([2, 4, 5, 8])
    num_groups = rng.randint(1, 6)
    rewards = [rng.choice([0, 1, 1, 0.5, 0]) for _ in range(group_size * num_groups)]
    metrics = {}
    ks = [2**i for i in range(int(math.log2(group_size)) + 1)] if group_size > 1 else []
    for k in ks:
        vals = []
        for g in range(num_groups):
            grp = rewards[g * group_size:(g + 1) * group_size]
            c = sum(1 for r in grp if r == 1)
            vals.append(float(1 - Fraction(math.comb(group_size - c, k), math.comb(group_size, k))))
        metrics[f"pass@{k}"] = float(np.mean(vals))
    grouped.append({"group_size": group_size, "rewards": rewards, "metrics": metrics})

# zlib level-9 ratios and the repetition rule (len > 10000 chars and ratio(last 10000) > 10).
def text_case(name, text):
    raw = text[-10000:].encode("utf-8")
    ratio = len(raw) / len(zlib.compress(raw, 9)) if raw else None
    return {"name": name, "text": text, "ratio_last_10000": ratio,
            "has_repetition": len(text) > 10000 and ratio is not None and ratio > 10}

words = ["alpha", "beta", "gamma", "delta", "数学", "証明", "ζ", "🙂", "x=", "1", "\n"]
texts = [
    text_case("short", "hello world"),
    text_case("repeat_10000_exact", "ab" * 5000),
    text_case("repeat_10001", "ab" * 5000 + "c"),
    text_case("repeat_long", "The answer is 42. " * 2000),
    text_case("random_words", " ".join(rng.choice(words) for _ in range(4000))),
    text_case("random_ascii", "".join(chr(rng.randint(33, 126)) for _ in range(12000))),
    text_case("unicode_repeat", "数学証明🙂" * 2600),
    text_case("unicode_random", "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(10050))),
    text_case("mixed_tail", "".join(chr(rng.randint(33, 126)) for _ in range(9000)) + "ok " * 700),
]

# numpy statistics.
stats = []
for values in [[1], [3, 1, 2], [4, 1, 3, 2], [10, 10, 10], [0.5, 100, 7, 7, 3.25, 8]]:
    arr = np.array(values, dtype=float)
    stats.append({"values": values, "mean": float(np.mean(arr)), "median": float(np.median(arr)),
                  "max": float(np.max(arr)), "min": float(np.min(arr))})

# str(round(x, 1)) for floats, as used in zero_std/count_{...} and zero_std_{...}.
floats = [0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 0.35, 0.05, 0.15, 2.675, 1e16, 1.5e16, 123456789.96,
          0.04, -0.05, 1e-5, 3.14159, 0.9999, 1e22, 7.0, -2.5, 0.45]
floats += [rng.uniform(-3, 3) for _ in range(40)]
rounds = [{"x": x, "str": str(round(x, 1))} for x in floats]
reprs = [{"x": x, "repr": repr(x)} for x in floats + [1e-4, 1e-5, 0.0001234, 1e15, 123.456, 5e-324, 1.7976931348623157e308]]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metric_goldens.json")
with open(out, "w") as f:
    json.dump({"pass_at_k": pass_at_k, "grouped_pass_rate": grouped, "texts": texts,
               "statistics": stats, "round1": rounds, "repr": reprs}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(out)
