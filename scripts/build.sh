#!/usr/bin/env bash
# Configures and builds vime into build/ (Release, Ninja, ccache when present). Safe to re-run.
# Usage: [VIME_WERROR=ON] [VIME_PCH=OFF] scripts/build.sh [target...]   (no target: everything, tests included; e.g. `vime_app`
# is the CLI, `vime_tests` the test binary: `ninja -C build -t targets` lists them all)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${VIME_JOBS:-2}  # each LibTorch translation unit needs ~1.3 GB; 2 jobs fit a 2-core CI machine
# VIME_WERROR=ON|OFF: warnings as errors in libvime, the binary and the tests (CI sets ON);
# VIME_PCH=ON|OFF: the precompiled ATen.h (cmake/VimePch.cmake, ON by default). Either, given,
# reconfigures build/.
if [ ! -f build/build.ninja ] || [ -n "${VIME_WERROR:-}${VIME_PCH:-}" ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${VIME_WERROR:+-DVIME_WERROR=$VIME_WERROR} \
    ${VIME_PCH:+-DVIME_PCH=$VIME_PCH}
fi
ninja -C build -j "$JOBS" "$@"
