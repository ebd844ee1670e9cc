#!/usr/bin/env bash
# Data-parallel scaling of the train step on one host: vime_bench_train at 1, 2, 4 ... GPUs
# (--tokens per GPU, default 16384), then scaling efficiency = tokens/s at N / (N x tokens/s at 1),
# and the peak memory of rank 0 with and without the distributed optimizer.
#   tools/bench/dp_train_bench.sh BUILD_DIR OUT_JSONL [MODEL] [GPU COUNTS...]
#   e.g. tools/bench/dp_train_bench.sh build-gpu $OUT/dp.jsonl qwen3-4b 1 2 4
# Extra vime_bench_train flags via BENCH_FLAGS (default --recompute).
set -uo pipefail
build=$1; out=$2; model=${3:-qwen3-4b}; shift 3 2>/dev/null || shift $#
counts=("${@:-1 2 4}")
flags=${BENCH_FLAGS:---recompute}
: > "$out"
for n in ${counts[@]}; do
  for opt in "" ${DIST_OPT:+--use-distributed-optimizer}; do
    line=$("$build/bin/vime_bench_train" --model "$model" --gpus "$n" $flags $opt 2>&1 |
           sed 's/^\[rank 0\] //' | grep '^{' | tail -1)
    [ -n "$line" ] || line="{\"error\": \"no result\", \"gpus\": $n, \"model\": \"$model\"}"
    echo "$line" | tee -a "$out"
  done
done
python3 - "$out" <<'PY' | tee -a "$out"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "tokens_per_s" in l]
base = {r.get("distributed_optimizer", False): r["tokens_per_s"] for r in rows if r["gpus"] == 1}
for r in rows:
    b = base.get(r.get("distributed_optimizer", False)) or base.get(False)
    if b and r["gpus"] > 1:
        print(json.dumps(dict(model=r["model"], gpus=r["gpus"],
                              distributed_optimizer=r.get("distributed_optimizer", False),
                              scaling_efficiency=round(r["tokens_per_s"] / (r["gpus"] * b), 3))))
PY
