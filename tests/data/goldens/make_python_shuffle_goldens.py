#!/usr/bin/env python3
"""Writes python_shuffle.json: the permutations slime's Dataset.shuffle makes
(random.Random(seed + epoch).shuffle(list(range(n)))), for vime's PythonRandom test.
Run with any CPython 3: python3 tests/data/goldens/make_python_shuffle_goldens.py"""
import json
import os
import random

cases = []
for n in [0, 1, 2, 3, 5, 10, 17, 100, 1000, 70000]:
    for seed in [0, 1, 42, 43, 44, 1234, 2**31 + 5, 2**40 + 7, -3]:
        perm = list(range(n))
        random.Random(seed).shuffle(perm)
        cases.append({"n": n, "seed": seed, "head": perm[:50], "checksum": sum(i * v for i, v in enumerate(perm))})
# Raw generator outputs, to localise a mismatch to seeding vs. shuffling.
raw = []
for seed in [0, 42, 2**40 + 7]:
    r = random.Random(seed)
    raw.append({"seed": seed, "uint32": [r.getrandbits(32) for _ in range(8)]})
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_shuffle.json")
with open(out, "w") as f:
    json.dump({"shuffles": cases, "raw": raw}, f, indent=1)
    f.write("\n")
