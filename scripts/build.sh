#!/usr/bin/env bash
# Configures and builds vime into build/ (Release, Ninja, ccache when present). Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${VIME_JOBS:-2}  # each LibTorch translation unit needs ~1.3 GB; 2 jobs fit a 2-core CI machine
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
ninja -C build -j "$JOBS"
