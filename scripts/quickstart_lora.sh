#!/usr/bin/env bash
# The quickstart's GRPO stage with LoRA instead of full fine-tuning: from the SFT checkpoint of
# scripts/quickstart.sh (run it first, or point QUICKSTART_OUT at a run that has sft/ and task/),
# GRPO trains rank-LORA_RANK adapters on every linear of the tiny Qwen3 (the base frozen; the KL
# reference is the base with the adapters off), then `vime eval` scores the SFT model and the
# adapted one on the held-out problems and prints both accuracies and their difference.
# LORA_RANK (default 8), LORA_ALPHA (16), LORA_LR (1e-3: adapters want a larger step than the
# quickstart's full fine-tuning lr of 1e-4) and QUICKSTART_GRPO_ROLLOUTS (20) set the run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${VIME_BIN_DIR:-build/bin}
OUT=${QUICKSTART_OUT:-runs/quickstart}
SEED=${QUICKSTART_SEED:-1}
ROLLOUTS=${QUICKSTART_GRPO_ROLLOUTS:-20}
RANK=${LORA_RANK:-8}
ALPHA=${LORA_ALPHA:-16}
LR=${LORA_LR:-1e-3}
LORA_OUT=${QUICKSTART_LORA_OUT:-$OUT/grpo_lora}
if [ ! -d "$OUT/sft" ] || [ ! -d "$OUT/task" ]; then
  echo "no SFT checkpoint under $OUT: run scripts/quickstart.sh first (QUICKSTART_OUT=$OUT)" >&2
  exit 2
fi
TIMEFORMAT='   (%R s wall, %U s user + %S s sys CPU)'
EVAL=(--eval-prompt-data arith "$OUT/task/data/test.jsonl")
SCORE=(--eval-temperature 0 --eval-max-response-len 16 --rm-type math --input-key input
  --label-key label)
rm -rf "$LORA_OUT"
echo "== GRPO with LoRA (rank $RANK, alpha $ALPHA, lr $LR): $ROLLOUTS rollouts"
time "$BIN/vime" train --config examples/quickstart/grpo.yaml --seed "$SEED" --rollout-seed "$SEED" \
  --hf-checkpoint "$OUT/task/model" --load "$OUT/sft" --finetune --ref-load "$OUT/sft" \
  --prompt-data "$OUT/task/data/train.jsonl" --num-rollout "$ROLLOUTS" "${EVAL[@]}" \
  --lora-rank "$RANK" --lora-alpha "$ALPHA" --lr "$LR" \
  --save "$LORA_OUT/ckpt" --save-interval "$ROLLOUTS" --metrics-jsonl "$LORA_OUT/metrics.jsonl"
echo "== eval: the SFT model, then SFT + adapter"
"$BIN/vime" eval --hf-checkpoint "$OUT/task/model" --load "$OUT/sft" "${EVAL[@]}" "${SCORE[@]}" \
  --eval-output "$LORA_OUT/eval_sft.jsonl"
"$BIN/vime" eval --hf-checkpoint "$OUT/task/model" --load "$LORA_OUT/ckpt" "${EVAL[@]}" \
  "${SCORE[@]}" --eval-output "$LORA_OUT/eval_lora.jsonl"
python3 - "$LORA_OUT" <<'PY'
import json, sys
out = sys.argv[1]
acc = lambda f: (lambda r: sum(r) / len(r))([json.loads(l)["raw_reward"] for l in open(f"{out}/{f}")])
before, after = acc("eval_sft.jsonl"), acc("eval_lora.jsonl")
print(f"held-out accuracy (greedy): after SFT {before:.3f}, after LoRA GRPO {after:.3f} "
      f"({after - before:+.3f})")
sys.exit(0 if after - before >= 0.1 else 1)
PY
