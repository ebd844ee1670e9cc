#!/usr/bin/env bash
# Fails, naming the files, when a tracked C++ file does not match .clang-format (clang-format-14, as CI
# installs it). Fix with: clang-format-14 -i FILE...
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' |
      xargs -P2 -n40 clang-format-14 --dry-run --Werror 2>&1 | grep -oE '^[^:]+\.(cpp|hpp|h|cc)' | sort -u || true)
if [ -n "$bad" ]; then
  echo "check_format: not formatted (clang-format-14 -i these):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "check_format: $(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' | wc -l) files formatted"
