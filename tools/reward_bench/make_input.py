#!/usr/bin/env python3
"""Writes the benchmark input: N math samples shaped like RL rollouts (a few KB of reasoning, then a
boxed answer), built from the committed goldens' (answer, label) pairs. Deterministic.

usage: make_input.py GOLDENS_DIR N OUT.jsonl
"""
import json
import random
import sys

goldens, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pairs = []
for name in ("math.jsonl", "math_random.jsonl"):
    with open(f"{goldens}/{name}", encoding="utf-8") as f:
        pairs += [json.loads(line) for line in f]
rng = random.Random(7)
filler = ("Let us reason step by step. We expand the expression, collect like terms and check the "
          "boundary cases carefully before simplifying. ")
with open(out, "w", encoding="utf-8") as f:
    for i in range(n):
        p = pairs[rng.randrange(len(pairs))]
        reasoning = filler * rng.randint(10, 30)
        f.write(json.dumps({"prompt": f"Problem {i}", "response": reasoning + p["response"],
                            "label": p["label"]}, ensure_ascii=False) + "\n")
