#!/usr/bin/env bash
# Context parallelism on the GPU machine (after build-gpu/ is built with vime_tests and
# vime_bench_train): the flash call with chunk-local queries against its keys (causal mask aligned
# at the end) equals the math path; then train tokens/s and peak memory per GPU of the Qwen3-0.6B
# and Qwen3-4B shapes with one sample of SEQ_LEN (32768) tokens at CP 1 (one GPU, where it fits)
# and CP 2 (two GPUs); and on one GPU the CP 1 limit: the longest of LENGTHS that trains.
# Results in $OUT (cp_bench.jsonl, cp_limit.jsonl and the logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
export NCCL_NVLS_ENABLE=0
n=$(nvidia-smi -L | wc -l)
start=$SECONDS
in_time() { [ $((SECONDS - start)) -lt ${BUDGET_S:-540} ] || { echo "skipped (time): $*"; return 1; }; }
echo "gpus: $n ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
build-gpu/bin/vime_tests "flash attention with fewer queries than keys aligns the causal mask at the end" \
  2>&1 | tail -3
bench() {  # log model gpus cp seq_len extra...
  local log=$1 m=$2 g=$3 c=$4 len=$5
  shift 5
  [ "$g" -gt "$n" ] && return 1
  in_time "bench $m CP $c $len" || return 1
  timeout ${BENCH_TIMEOUT_S:-150} build-gpu/bin/vime_bench_train --model "$m" --gpus "$g" --cp "$c" \
    --tokens "$len" --seq-len "$len" --recompute --iters 3 --warmup 1 "$@" > "$out/cp_one.log" 2>&1
  local rc=$?
  echo "bench $m gpus $g cp $c seq_len $len $*: rc $rc"
  grep '"impl"' "$out/cp_one.log" | tee -a "$out/$log"
  grep -v '"impl"' "$out/cp_one.log" | grep -iE "error|out of memory" | tail -2
  cat "$out/cp_one.log" >> "$out/cp_bench.log"
  rm -f "$out/cp_one.log"
  return $rc
}
len=${SEQ_LEN:-32768}
for m in ${MODELS:-qwen3-0.6b qwen3-4b}; do
  bench cp_bench.jsonl "$m" 1 1 "$len"
  bench cp_bench.jsonl "$m" 2 2 "$len"
done
# The CP 1 limit on one GPU: lengths in increasing order until one fails (out of memory).
for m in ${MODELS:-qwen3-0.6b qwen3-4b}; do
  for l in ${LENGTHS:-16384 32768 49152 65536 98304 131072}; do
    bench cp_limit.jsonl "$m" 1 1 "$l" || break
  done
done
