#!/usr/bin/env bash
# [tp] on a 4-GPU host (after build-gpu/ is built with vime_dump_logits and vime_bench_train):
# HF parity of logits at tensor-parallel sizes 1, 2 and 4 (random-init tiny Qwen3/Qwen2/Llama-3
# written by transformers, fp32 and bf16), then train tokens/s and peak memory per GPU for the
# Qwen3-8B and Qwen3-14B shapes at TP 2 and TP 4. Results in $OUT (parity.jsonl, tp_bench.jsonl and
# the logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
export NCCL_NVLS_ENABLE=0
n=$(nvidia-smi -L | wc -l)
start=$SECONDS
in_time() { [ $((SECONDS - start)) -lt ${BUDGET_S:-330} ] || { echo "skipped (time): $*"; return 1; }; }
echo "gpus: $n ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
for tp in ${PARITY_TPS:-1 2 4}; do
  [ "$tp" -gt "$n" ] && continue
  in_time "parity TP $tp" || continue
  timeout ${PARITY_TIMEOUT_S:-200} python3 tools/parity/hf_parity.py --vime-dump build-gpu/bin/vime_dump_logits \
    --out "$out/parity_tp$tp" --tp "$tp" > "$out/parity_tp$tp.jsonl" 2> "$out/parity_tp$tp.err"
  echo "parity TP $tp: rc $?"
  cat "$out/parity_tp$tp.jsonl" | tee -a "$out/parity.jsonl"
  tail -3 "$out/parity_tp$tp.err"
  cat "$out/parity_tp$tp.err" >> "$out/parity.err"
  rm -rf "$out/parity_tp$tp" "$out/parity_tp$tp.jsonl" "$out/parity_tp$tp.err"
done
bench() {  # model gpus tp extra...
  local m=$1 g=$2 t=$3
  shift 3
  [ "$g" -gt "$n" ] && return
  in_time "bench $m TP $t" || return
  timeout 100 build-gpu/bin/vime_bench_train --model "$m" --gpus "$g" --tp "$t" --tokens 8192 \
    --seq-len 2048 --recompute --iters 3 --warmup 1 "$@" > "$out/bench_one.log" 2>&1
  echo "bench $m gpus $g tp $t $*: rc $?"
  grep '"impl"' "$out/bench_one.log" | tee -a "$out/tp_bench.jsonl"
  grep -v '"impl"' "$out/bench_one.log" | tail -2
  cat "$out/bench_one.log" >> "$out/bench.log"
  rm -f "$out/bench_one.log"
}
# bf16 weights + fp32 main grads, masters and Adam moments: 14 bytes a parameter, sharded by TP
# (and the optimizer's 12 by DP under ZeRO-1): 8B at TP 2 alone (72 GB) and 14B at TP 2 x DP 2
# (84 GB) do not fit 80 GB, so they are not run.
if [ -z "${NO_BENCH:-}" ]; then
  bench qwen3-8b 4 4
  bench qwen3-8b 4 2 --use-distributed-optimizer
  bench qwen3-14b 4 4
fi
