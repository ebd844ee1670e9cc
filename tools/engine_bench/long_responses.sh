#!/usr/bin/env bash
# The embedded engine at reasoning-RL response lengths with its default memory sizing: engine_bench
# for each length in LENGTHS (default 2048 4096 8192), PROMPTS prompts (default 256) of 128 tokens,
# one JSON line each with the driver's peak memory for the process (nvidia-smi, sampled every
# 200 ms) added. From the repository root after the build (BUILD: default build-gpu):
#   bash tools/engine_bench/long_responses.sh [model]
set -uo pipefail
model=${1:-qwen3-0.6b}
build=${BUILD:-build-gpu}
rc=0
for new in ${LENGTHS:-2048 4096 8192}; do
  mem=$(mktemp)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$mem" &
  sampler=$!
  line=$("$build/bin/engine_bench" --model "$model" --prompts "${PROMPTS:-256}" --prompt-len 128 \
    --new-tokens "$new" --device cuda ${ENGINE_BENCH_FLAGS:-} 2>&1 | tail -1)
  status=${PIPESTATUS[0]}
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  peak=$(sort -n "$mem" | tail -1)
  rm -f "$mem"
  if [ "$status" != 0 ]; then
    echo "engine_bench --new-tokens $new failed (exit $status): $line"
    rc=1
    continue
  fi
  echo "${line%\}}, \"peak_device_mib\": ${peak:-null}}"
done
exit $rc
