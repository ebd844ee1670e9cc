#!/usr/bin/env bash
# The GPU machine's build and test run, from the repository root, with the kit staged in .device/
# (bash ../shared/device/stage.sh) and carried along with the test assets that fit the carry limit:
#   carry: .device .cache/assets/{gpt2,tokenizer-qwen3,tokenizer-llama3,tokenizer-deepseek-v3,tokenizer-gpt4o}
# Logs go to $OUT (the device tool's output folder) when it is set. A fresh configure matters: CMake caches
# the libraries it found (cmake/VimeDeps.cmake says why that once picked the wrong PCRE2 there).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
bash .device/setup-deps.sh > "$out/setup.log" 2>&1 && source /opt/vime-deps/env.sh
[ "${FRESH:-1}" = 1 ] && rm -rf build-gpu
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
ninja -C build-gpu > "$out/build.log" 2>&1 || { grep -A12 FAILED "$out/build.log" | head -40; exit 1; }
# tokenizer: no CUDA code, and its Gemma 3 files (33 MB) do not fit the carry limit beside the others.
# Two intra-op threads per test process: with LibTorch's default (a thread per core) 14 parallel
# entries on 16 cores oversubscribed the machine and CPU-bound entries ran past 400 s.
rm -f build-gpu/skipped_cases.log
(cd build-gpu && VIME_SKIP_LOG="$PWD/skipped_cases.log" OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} ctest -j12 --output-on-failure \
  -E "scaffold|tokenizer") > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|\*\*\*" "$out/ctest.log"
# Here every GPU case runs: one that finds no CUDA device fails the run (tests/support/skip.hpp).
skips=$(cat build-gpu/skipped_cases.log 2>/dev/null)
[ -n "$skips" ] && echo "$skips"
if echo "$skips" | grep -q "no CUDA"; then echo "GPU cases were skipped for want of CUDA"; rc=1; fi
# HF transformers loads what `vime convert-hf` and `vime train --save-hf` write and reproduces
# vime's logits.
timeout 600 python3 tools/parity/hf_export_parity.py --bin-dir build-gpu/bin --out "$out/hf_export" \
  > "$out/hf_export.jsonl" 2> "$out/hf_export.err"
export_rc=$?
cat "$out/hf_export.jsonl"; tail -5 "$out/hf_export.err"
echo "HF export parity: exit $export_rc"
[ $export_rc = 0 ] || rc=1
rm -rf "$out/hf_export"
# Two GPUs: the trainer on GPU 0 and one launched `vime serve` engine on GPU 1, weights over NCCL
# (the engine once came up on the CPU and the TCPStore rendezvous then hung). Bounded:
# every wait of the vLLM backend has a deadline, and the whole run gets 10 minutes.
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
  w=$(mktemp -d)
  build-gpu/bin/make_arith_task --out "$w/task" > /dev/null &&
  VIME_VLLM_COMMAND="$PWD/build-gpu/bin/vime serve" timeout 600 build-gpu/bin/vime train \
    --hf-checkpoint "$w/task/model" --prompt-data "$w/task/data/train.jsonl" --input-key input \
    --label-key label --rm-type math --advantage-estimator grpo --rollout-batch-size 8 \
    --n-samples-per-prompt 4 --global-batch-size 32 --rollout-max-response-len 16 --lr 1e-3 \
    --num-rollout 3 --ci-test --rollout-backend vllm --actor-num-gpus-per-node 1 \
    --rollout-num-gpus 1 --rollout-num-gpus-per-engine 1 --update-weight-transport nccl \
    --vllm-weight-transfer-timeout-sec 120 > "$out/two_gpu_vllm.log" 2>&1
  two=$?
  grep -E "error|weights v|engine http" "$out/two_gpu_vllm.log" | cut -c1-300 | tail -8
  echo "two-GPU launched vLLM backend (NCCL weights): exit $two"
  [ $two = 0 ] || rc=1
else
  echo "two-GPU launched vLLM backend: skipped (fewer than 2 GPUs)"
fi
exit $rc
