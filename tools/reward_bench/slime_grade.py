#!/usr/bin/env python3
"""Grades a JSONL file with slime's own math grader (rm_type math: int(grade_answer_verl)), the way
slime's rm_hub does, and reports samples per second of grading (file reading excluded).

usage: /usr/bin/python3 slime_grade.py SLIME_RM_DIR IN.jsonl OUT.jsonl
SLIME_RM_DIR holds slime's math_utils.py (see scripts/goldens/make_reward_goldens.py); needs
Debian's python3-sympy and python3-pylatexenc.
"""
import json
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1])
from math_utils import grade_answer_verl  # noqa: E402

warnings.filterwarnings("ignore")  # after the import: sympy installs its own filters

rows = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8") if line.strip()]
start = time.perf_counter()
rewards = [1 if grade_answer_verl(r["response"], r["label"]) else 0 for r in rows]
seconds = time.perf_counter() - start
with open(sys.argv[3], "w", encoding="utf-8") as f:
    for r, reward in zip(rows, rewards):
        r["reward"] = reward
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(json.dumps({"samples": len(rows), "seconds": seconds, "samples_per_s": len(rows) / seconds,
                  "mean_reward": sum(rewards) / len(rewards)}))
