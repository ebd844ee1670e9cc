#!/usr/bin/env bash
# Chat-template rendering, one thread: vime's ChatTemplate against transformers' Jinja setup on
# Debian python3-jinja2 (the goldens' oracle), on the same inputs in the same run (the Qwen3 and
# Llama-3 golden conversations that render). Needs a build (ninja -C build vime_chat_template_bench)
# and python3-jinja2:   tools/chat_template_bench/run.sh [PASSES]
set -euo pipefail
cd "$(dirname "$0")/../.."
PASSES=${1:-20}
ASSETS=${VIME_ASSET_DIR:-.cache/assets}
BENCH=${BENCH:-build/bin/vime_chat_template_bench}
printf '%-8s %14s %16s %8s %s\n' template "vime renders/s" "python renders/s" ratio "output bytes"
for name in qwen3 llama3; do
  dir="$ASSETS/tokenizer-$name"
  goldens="tests/data/chat_templates/$name.jsonl"
  read -r _ py_rps _ py_bytes < <(/usr/bin/python3 tools/chat_template_bench/py_bench.py "$dir" "$goldens" "$PASSES")
  read -r _ vime_rps _ vime_bytes < <("$BENCH" "$dir" "$goldens" "$PASSES")
  [ "$py_bytes" = "$vime_bytes" ] || echo "warning: $name output sizes differ: vime $vime_bytes, python $py_bytes" >&2
  printf '%-8s %14s %16s %8s %s\n' "$name" "$vime_rps" "$py_rps" "$(awk -v a="$vime_rps" -v b="$py_rps" 'BEGIN{printf "%.2fx", a/b}')" "$vime_bytes"
done
