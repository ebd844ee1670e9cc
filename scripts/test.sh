#!/usr/bin/env bash
# Builds vime and runs the whole test suite (unit, integration with real plugins and the vime binary, and the
# out-of-tree plugin build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
rc=0
ctest -j2 --output-on-failure || rc=$?
# Cases that cannot run here report as skipped (tests/support/skip.hpp); the GPU ones run in
# scripts/gpu_test.sh on a machine with CUDA.
log=Testing/Temporary/LastTest.log
gpu=$(awk '/^[0-9]+ GPU cases? skipped \(no CUDA\)$/ {n += $1} END {print n + 0}' "$log")
echo "$gpu GPU cases skipped (no CUDA): scripts/gpu_test.sh runs them"
grep -E '^[0-9]+ cases? skipped \(' "$log" || true
exit $rc
