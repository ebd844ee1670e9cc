#!/usr/bin/env bash
# The ASan+UBSan build of vime's torch-free areas (core, tokenizer, metrics, http, retrieval, plugin,
# data, reward, eval), their tests and the fuzz harnesses (tests/sanitize/CMakeLists.txt), and the
# UBSan build of the LibTorch-linked model, checkpoint and optimizer code (tests/sanitize/torch), then
# the tests and a bounded fuzz run: VIME_FUZZ_RUNS mutations per harness (default 3000). The last step
# of .ci/run; JOBS sets the build's -j. Prints how long the build and the runs took.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SANITIZE_BUILD_DIR:-build-san}
start=$SECONDS
cmake -S tests/sanitize -B "$build" -G Ninja -DVIME_FUZZ_RUNS="${VIME_FUZZ_RUNS:-3000}" > /dev/null
ninja -C "$build" -j "${JOBS:-2}"
built=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
(cd "$build" && ctest -j "${JOBS:-2}" --output-on-failure)
echo "sanitize: build $((built - start)) s, tests and fuzzing $((SECONDS - built)) s"
