#!/usr/bin/env bash
# The engine's GPU-machine run (kit staged in .device/, carry: .device .cache/assets/tokenizer-qwen3):
#   STAGE=build: deps, fresh configure, build of vime_tests and engine_bench
#   STAGE=run:   [engine] and [gpu] tests, then tools/engine_bench/run.sh on qwen3-0.6b
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
if [ "${STAGE:-build}" = build ]; then
  bash .device/setup-deps.sh > "$out/setup.log" 2>&1 && source /opt/vime-deps/env.sh
  rm -rf build-gpu
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
  ninja -C build-gpu -j16 vime_tests engine_bench > "$out/build.log" 2>&1 || { grep -A12 FAILED "$out/build.log" | head -40; exit 1; }
  tail -1 "$out/build.log"
else
  source /opt/vime-deps/env.sh
  build-gpu/bin/vime_tests "[engine],[gpu]" -s 2>&1 | grep -E "agreement|passed|failed|FAILED|SKIP|with expansion" -A2 | tail -30
  bash tools/engine_bench/run.sh qwen3-0.6b "${PROMPTS:-256}" 128 "${NEW:-512}" cuda 2>&1 | tail -5
fi
