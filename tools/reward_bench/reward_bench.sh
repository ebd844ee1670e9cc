#!/usr/bin/env bash
# Samples per second of `vime reward --rm-type math` against slime's Python grader (sympy) on the
# same file in the same run, and whether they agree on every sample.
#
# usage: tools/reward_bench/reward_bench.sh SLIME_RM_DIR [N=2000] [BUILD=build]
#   SLIME_RM_DIR: slime's math_utils.py (see scripts/goldens/make_reward_goldens.py for where to get it)
#   needs /usr/bin/python3 with python3-sympy and python3-pylatexenc (Debian packages)
set -euo pipefail
SLIME_RM=${1:?usage: reward_bench.sh SLIME_RM_DIR [N] [BUILD]}
N=${2:-2000}
BUILD=${3:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VIME="$ROOT/$BUILD/bin/vime"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3

$PY "$HERE/make_input.py" "$ROOT/tests/data/reward_goldens" "$N" "$WORK/in.jsonl"
echo "input: $N samples, $(du -h "$WORK/in.jsonl" | cut -f1)"

# vime: grading time as `vime reward` reports it (file I/O and process start excluded), plus wall.
rate() { sed -n 's/.*, \([0-9.]*\) samples\/s).*/\1/p'; }
t0=$(date +%s.%N)
V1=$("$VIME" reward --rm-type math --workers 1 --input "$WORK/in.jsonl" --output "$WORK/vime1.jsonl" 2>&1 | tail -1)
t1=$(date +%s.%N)
VN=$("$VIME" reward --rm-type math --input "$WORK/in.jsonl" --output "$WORK/vimeN.jsonl" 2>&1 | tail -1)
S=$($PY "$HERE/slime_grade.py" "$SLIME_RM" "$WORK/in.jsonl" "$WORK/slime.jsonl")

$PY - "$WORK" "$V1" "$VN" "$S" "$t0" "$t1" "$(nproc)" <<'PYEOF'
import json, re, sys
work, v1, vn, s, t0, t1, cores = sys.argv[1:]
rate = lambda line: float(re.search(r"([0-9.]+) samples/s", line).group(1))
slime = json.loads(s)
r1, rn, rs = rate(v1), rate(vn), slime["samples_per_s"]
a = {r["prompt"]: r["reward"] for r in map(json.loads, open(f"{work}/slime.jsonl"))}
b = {r["prompt"]: r["reward"] for r in map(json.loads, open(f"{work}/vime1.jsonl"))}
agree = sum(1 for k in a if b.get(k) == a[k])
print(f"slime (python, sympy):  {rs:10.1f} samples/s")
print(f"vime reward, 1 thread:  {r1:10.1f} samples/s   ratio {r1 / rs:8.1f}x")
print(f"vime reward, {cores} threads: {rn:10.1f} samples/s   ratio {rn / rs:8.1f}x")
print(f"vime wall time incl. process start and file I/O, 1 thread: {float(t1) - float(t0):.2f} s")
print(f"agreement with slime: {agree}/{len(a)}")
PYEOF
