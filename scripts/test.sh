#!/usr/bin/env bash
# Builds vime and runs the whole test suite (unit, integration with real plugins and the vime binary, and the
# out-of-tree plugin build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
# Cases that cannot run here report as skipped (tests/support/skip.hpp) and each test process adds
# its counts to $VIME_SKIP_LOG; the GPU ones run in scripts/gpu_test.sh on a machine with CUDA.
log=Testing/skipped_cases.log
rm -f "$log"
rc=0
VIME_SKIP_LOG="$PWD/$log" ctest -j2 --output-on-failure || rc=$?
touch "$log"
gpu=$(awk '/^[0-9]+ GPU cases? skipped \(no CUDA\)$/ {n += $1} END {print n + 0}' "$log")
echo "$gpu GPU cases skipped (no CUDA): scripts/gpu_test.sh runs them"
grep -E '^[0-9]+ cases? skipped \(' "$log" || true
exit $rc
