#!/usr/bin/env bash
# [dist] on a multi-GPU host (after build-gpu/ is built): the data-parallel tests on NCCL, the GRPO
# loop with --ci-test on 1, 2 and 4 GPUs (as many as the host has), then the train-step scaling
# bench. Carry .device and .cache/assets/tokenizer-qwen3. Results in $OUT.
#   STAGES="tests loop bench" (default all)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
source /opt/vime-deps/env.sh
n=$(nvidia-smi -L | wc -l)
counts="1"
[ "$n" -ge 2 ] && counts="1 2"
[ "$n" -ge 4 ] && counts="1 2 4"
stages=${STAGES:-tests loop bench}
echo "gpus: $n ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
if [[ $stages == *tests* ]]; then
  build-gpu/bin/vime_tests "[dist],[dist_train]" > "$out/dist_tests.log" 2>&1
  echo "dist tests: rc $? $(tail -2 "$out/dist_tests.log" | tr '\n' ' ')"
fi
if [[ $stages == *loop* ]]; then
  for g in ${LOOP_GPUS:-$counts}; do
    GPUS=$g BENCH=0 ROLLOUTS=${ROLLOUTS:-3} bash scripts/gpu_loop.sh > "$out/loop_$g.txt" 2>&1
    echo "loop on $g GPU(s): rc $?"
    python3 - "$out/gpu_loop_metrics_$g.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
for r in rows:
    m = r.get("metrics", r)
    keys = ["perf/step_time", "perf/rollout_time", "perf/train_time", "train/train_rollout_logprob_abs_diff",
            "rollout/raw_reward"]
    got = {k: round(m[k], 4) for k in keys if k in m}
    if "perf/step_time" in got: print(" ", got)
PY
  done
fi
if [[ $stages == *bench* ]]; then
  bash tools/bench/dp_train_bench.sh build-gpu "$out/dp_train.jsonl" ${BENCH_MODEL:-qwen3-4b} $counts
fi
