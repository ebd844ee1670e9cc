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
(cd build-gpu && ctest -j8 --output-on-failure -E "scaffold|tokenizer") > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|\*\*\*" "$out/ctest.log"
exit $rc
