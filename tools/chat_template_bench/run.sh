#!/usr/bin/env bash
# Chat-template rendering, one thread: vime's ChatTemplate against transformers' Jinja setup on
# Debian python3-jinja2 (the goldens' oracle), on the same inputs in the same run: the Qwen3 and
# Llama-3 golden conversations that render ("goldens"), and 40 long conversations of ~20k
# characters each ("long", make_long_conversations.py). Needs a build
# (ninja -C build vime_chat_template_bench) and python3-jinja2:
#   tools/chat_template_bench/run.sh [PASSES]
set -euo pipefail
cd "$(dirname "$0")/../.."
PASSES=${1:-20}
ASSETS=${VIME_ASSET_DIR:-.cache/assets}
BENCH=${BENCH:-build/bin/vime_chat_template_bench}
long=$(mktemp --suffix=.jsonl)
trap 'rm -f "$long"' EXIT
/usr/bin/python3 tools/chat_template_bench/make_long_conversations.py "$long"
printf '%-8s %-8s %14s %16s %8s %s\n' template inputs "vime renders/s" "python renders/s" ratio "output bytes"
for name in qwen3 llama3; do
  dir="$ASSETS/tokenizer-$name"
  for inputs in goldens long; do
    file=$([ "$inputs" = goldens ] && echo "tests/data/chat_templates/$name.jsonl" || echo "$long")
    passes=$([ "$inputs" = goldens ] && echo "$PASSES" || echo $(( (PASSES + 3) / 4 )))
    read -r _ py_rps _ py_bytes < <(/usr/bin/python3 tools/chat_template_bench/py_bench.py "$dir" "$file" "$passes")
    read -r _ vime_rps _ vime_bytes < <("$BENCH" "$dir" "$file" "$passes")
    [ "$py_bytes" = "$vime_bytes" ] || echo "warning: $name $inputs output sizes differ: vime $vime_bytes, python $py_bytes" >&2
    printf '%-8s %-8s %14s %16s %8s %s\n' "$name" "$inputs" "$vime_rps" "$py_rps" \
      "$(awk -v a="$vime_rps" -v b="$py_rps" 'BEGIN{printf "%.2fx", a/b}')" "$vime_bytes"
  done
done
