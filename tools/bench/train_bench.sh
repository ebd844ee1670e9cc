#!/usr/bin/env bash
# Runs vime's train-step benchmark and the HF transformers + torch eager baseline side by side on
# one GPU, and prints each pair with the throughput ratio.
#   tools/bench/train_bench.sh BUILD_DIR OUT_JSONL [MODEL...]   (default models: qwen3-0.6b qwen3-4b)
set -uo pipefail
build=$1; out=$2; shift 2
models=("${@:-qwen3-0.6b qwen3-4b}")
here=$(cd "$(dirname "$0")" && pwd)
: > "$out"
for model in ${models[@]}; do
  for rc in "" "--recompute"; do
    v=$("$build/bin/vime_bench_train" --model "$model" $rc 2>&1 | tail -1)
    h=$(python3 "$here/hf_train_step.py" --model "$model" $rc 2>&1 | tail -1)
    echo "$v" | tee -a "$out"
    echo "$h" | tee -a "$out"
    python3 - "$v" "$h" <<'PY' | tee -a "$out"
import json, sys
try:
    v, h = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    print(json.dumps(dict(ratio_vime_over_hf=round(v["tokens_per_s"] / h["tokens_per_s"], 3),
                          model=v["model"], recompute=v["recompute"])))
except Exception as e:
    print(json.dumps(dict(error=str(e))))
PY
  done
done
