#!/usr/bin/env bash
# Builds vime and runs the whole test suite (unit, integration with real plugins and the vime binary, and the
# out-of-tree plugin build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build && ctest -j2 --output-on-failure
