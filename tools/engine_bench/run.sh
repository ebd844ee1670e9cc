#!/usr/bin/env bash
# NativeEngine vs HF transformers generate() on one shape, one JSON line each. From the repository
# root, after the build (BUILD: the build dir, default build-gpu; ENGINE_BENCH_FLAGS: more engine_bench
# flags, e.g. --enforce-eager):
#   bash tools/engine_bench/run.sh [model] [prompts] [prompt_len] [new_tokens] [device]
set -euo pipefail
model=${1:-qwen3-0.6b} prompts=${2:-256} prompt_len=${3:-128} new_tokens=${4:-512} device=${5:-cuda}
build=${BUILD:-build-gpu}
"$build/bin/engine_bench" --model "$model" --prompts "$prompts" --prompt-len "$prompt_len" \
  --new-tokens "$new_tokens" --device "$device" ${ENGINE_BENCH_FLAGS:-}
python3 "$(dirname "$0")/hf_generate_bench.py" --model "$model" --prompts "$prompts" \
  --prompt-len "$prompt_len" --new-tokens "$new_tokens" --device "$device"
