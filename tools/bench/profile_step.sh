#!/usr/bin/env bash
# Profiles one training step (and one log-prob pass) of vime and of HF transformers eager on the
# same GPU: Chrome traces plus the per-kernel-class / per-ATen-op tables of trace_summary.py.
#   tools/bench/profile_step.sh BUILD_DIR OUT_DIR [MODEL[:--recompute]...]
#   (default: qwen3-0.6b qwen3-4b:--recompute)
set -uo pipefail
build=$1; out=$2; shift 2
specs=("${@:-qwen3-0.6b qwen3-4b:--recompute}")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/profile_summary.jsonl"
for spec in ${specs[@]}; do
  model=${spec%%:*}; flags=""; [ "$spec" != "$model" ] && flags=${spec#*:}
  for mode in train forward; do
    extra=$flags; [ "$mode" = forward ] && extra="--forward-only"
    tag="${model}_${mode}"
    "$build/bin/vime_bench_train" --model "$model" $extra --iters 3 --profile "$out/vime_$tag.json" \
      2>&1 | tail -1 | tee -a "$out/profile_summary.jsonl"
    python3 "$here/hf_train_step.py" --model "$model" $extra --iters 3 \
      --profile "$out/hf_$tag.json" 2>&1 | tail -1 | tee -a "$out/profile_summary.jsonl"
    for impl in vime hf; do
      [ -f "$out/${impl}_$tag.json" ] || continue
      python3 "$here/trace_summary.py" "$out/${impl}_$tag.json" --label "${impl} $tag $extra" \
        --json "$out/profile_summary.jsonl"
    done
  done
done
