#!/usr/bin/env bash
# The quickstart on a fresh Debian 12 machine: install, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build/bin/vime --version
build/bin/vime train --dry-run --config examples/quickstart.yaml
