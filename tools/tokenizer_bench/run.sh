#!/usr/bin/env bash
# Encode throughput, one thread, vime against HF's Rust tokenizers (npm tokenizers@0.23.2) on the same
# corpus in the same run. Needs a build (ninja -C build vime_tokenizer_bench), node, and the npm package:
#   mkdir -p /tmp/tok-oracle && (cd /tmp/tok-oracle && npm install tokenizers@0.23.2)
#   NODE_PATH=/tmp/tok-oracle/node_modules tools/tokenizer_bench/run.sh [PASSES]
set -euo pipefail
cd "$(dirname "$0")/../.."
PASSES=${1:-5}
ASSETS=${VIME_ASSET_DIR:-.cache/assets}
BENCH=${BENCH:-build/bin/vime_tokenizer_bench}
corpus=$(mktemp --suffix=.jsonl)
trap 'rm -f "$corpus"' EXIT
node tools/tokenizer_bench/make_corpus.js "$corpus"
printf '%-12s %12s %12s %8s %s\n' tokenizer "vime MB/s" "HF MB/s" ratio tokens
for name in qwen3 llama3 deepseek-v3 gemma3 gpt4o; do
  dir="$ASSETS/tokenizer-$name"
  [ -f "$dir/tokenizer.json" ] || continue
  read -r _ hf_mbs hf_tokens < <(TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1 node tools/tokenizer_bench/hf_bench.js "$dir/tokenizer.json" "$corpus" "$PASSES")
  read -r _ vime_mbs vime_tokens < <("$BENCH" "$dir" "$corpus" "$PASSES")
  [ "$hf_tokens" = "$vime_tokens" ] || echo "warning: $name token counts differ: vime $vime_tokens, HF $hf_tokens" >&2
  printf '%-12s %12s %12s %8s %s\n' "$name" "$vime_mbs" "$hf_mbs" "$(awk -v a="$vime_mbs" -v b="$hf_mbs" 'BEGIN{printf "%.2fx", a/b}')" "$vime_tokens"
done
