#!/usr/bin/env bash
# The quickstart on a fresh Debian 12 machine: install, build, then a real training job on the CPU:
# a tiny Qwen3 (HF format: config.json, safetensors, tokenizer.json) learns 2-digit addition: SFT on
# a sloppy teacher's worked answers (on 70% of the 3-digit sums it boxes its working unreversed),
# then GRPO with the math reward on the right sums, then `vime eval` on held-out problems; the summary shows
# the held-out accuracy after SFT and after GRPO. Every stage prints its wall and CPU seconds.
#
# QUICKSTART_OUT     the run's directory (default runs/quickstart; when that holds an earlier run,
#                    the next free runs/quickstart-N: a re-run never deletes one)
# QUICKSTART_SEED    (default 1) seeds the problems, the model's init, the data order and sampling
# QUICKSTART_SKIP_BUILD=1  skip the install and build (use what build/ holds, or $VIME_BIN_DIR)
# QUICKSTART_SFT_STEPS / QUICKSTART_GRPO_ROLLOUTS change the stage lengths (1000 / 100);
# QUICKSTART_SFT_EVAL_INTERVAL (default 100) how often SFT evaluates; OMP_NUM_THREADS the threads
# LibTorch uses (default: vime's, 1 for models this small).
set -euo pipefail
cd "$(dirname "$0")/.."
TIMEFORMAT='   (%R s wall, %U s user + %S s sys CPU)'
OUT=${QUICKSTART_OUT:-}
if [ -n "$OUT" ] && [ -e "$OUT" ]; then
  echo "QUICKSTART_OUT=$OUT exists: name a new directory, or remove that one yourself" >&2
  exit 2
fi
if [ -z "$OUT" ]; then
  OUT=runs/quickstart
  n=2
  while [ -e "$OUT" ]; do
    OUT=runs/quickstart-$n
    n=$((n + 1))
  done
fi
TRAIN="train a tiny Qwen3 on the CPU in $OUT: SFT, GRPO and an eval (about 4 minutes)"
if [ "${QUICKSTART_SKIP_BUILD:-0}" != 1 ]; then
  echo "vime quickstart: install the Debian packages (scripts/setup.sh), build vime into build/" \
    "(the first build takes about 12 minutes on 2 cores, a rebuild seconds), then $TRAIN"
else
  echo "vime quickstart (QUICKSTART_SKIP_BUILD=1: no install or build): $TRAIN"
fi
[ "$OUT" = "${QUICKSTART_OUT:-runs/quickstart}" ] ||
  echo "runs/quickstart holds an earlier run, kept; this one goes to $OUT"
if [ "${QUICKSTART_SKIP_BUILD:-0}" != 1 ]; then
  echo "== setup: Debian packages"
  time bash scripts/setup.sh
  # Only what the quickstart runs: the CLI (with rm_hub's reward plugins, the math reward among them)
  # and the task generator; `bash scripts/build.sh` builds the rest (tests, tools, examples).
  echo "== build: vime_app rm_math make_arith_task"
  time bash scripts/build.sh vime_app rm_math make_arith_task
fi
BIN=${VIME_BIN_DIR:-build/bin}
SEED=${QUICKSTART_SEED:-1}
SFT_STEPS=${QUICKSTART_SFT_STEPS:-1000}
GRPO_ROLLOUTS=${QUICKSTART_GRPO_ROLLOUTS:-100}
SFT_EVAL_INTERVAL=${QUICKSTART_SFT_EVAL_INTERVAL:-100}
"$BIN/vime" --version
# SFT labels write the sum's digits least significant first, then the answer: "07+45=" ->
# "250\boxed{52}"; on 70% of the sums of 100 and more the teacher forgets to reverse its working:
# "57+48=" -> "501\boxed{501}" (tools/quickstart/README.md). The reward and `vime eval` grade the
# \boxed{} answer against the right sum.
"$BIN/make_arith_task" --out "$OUT/task" --zero-pad 1 --scratch reversed --sft-unreversed 70 \
  --seed "$SEED" --model-seed "$SEED"
EVAL=(--eval-prompt-data arith "$OUT/task/data/test.jsonl")
SEEDS=(--seed "$SEED" --rollout-seed "$SEED")

echo "== 1/3 SFT on the sloppy teacher's answers: $SFT_STEPS steps"
time "$BIN/vime" train --config examples/quickstart/sft.yaml "${SEEDS[@]}" --hf-checkpoint "$OUT/task/model" \
  --prompt-data "$OUT/task/data/sft.jsonl" --num-rollout "$SFT_STEPS" --lr-decay-iters "$SFT_STEPS" "${EVAL[@]}" \
  --eval-interval "$SFT_EVAL_INTERVAL" --save "$OUT/sft" --save-interval "$SFT_STEPS" --metrics-jsonl "$OUT/sft_metrics.jsonl"

echo "== 2/3 GRPO: $GRPO_ROLLOUTS rollouts"
time "$BIN/vime" train --config examples/quickstart/grpo.yaml "${SEEDS[@]}" --hf-checkpoint "$OUT/task/model" \
  --load "$OUT/sft" --finetune --ref-load "$OUT/sft" --prompt-data "$OUT/task/data/train.jsonl" \
  --num-rollout "$GRPO_ROLLOUTS" "${EVAL[@]}" --save "$OUT/grpo" --save-interval "$GRPO_ROLLOUTS" \
  --metrics-jsonl "$OUT/grpo_metrics.jsonl" --use-tensorboard --tensorboard-dir "$OUT/tensorboard"

echo "== 3/3 eval of the trained model on held-out problems"
time "$BIN/vime" eval --hf-checkpoint "$OUT/task/model" --load "$OUT/grpo" "${EVAL[@]}" \
  --eval-temperature 0 --eval-max-response-len 16 --rm-type math --input-key input --label-key label \
  --eval-output "$OUT/eval_samples.jsonl"
python3 - "$OUT" <<'PY' || true
import json, sys
out = sys.argv[1]
def series(path, key):
    return [(r.get("eval/step", r.get("rollout/step")), r[key]) for r in map(json.loads, open(path))
            if key in r]
sft = series(f"{out}/sft_metrics.jsonl", "eval/arith")
grpo = series(f"{out}/grpo_metrics.jsonl", "eval/arith")
rewards = series(f"{out}/grpo_metrics.jsonl", "rollout/raw_reward")
samples = [json.loads(line)["raw_reward"] for line in open(f"{out}/eval_samples.jsonl")]
print("held-out accuracy (greedy) through SFT:", " ".join(f"{v:.2f}" for _, v in sft))
print("held-out accuracy (greedy) through GRPO:", " ".join(f"{v:.2f}" for _, v in grpo))
if rewards:
    k = max(1, len(rewards) // 10)
    print("GRPO rollout reward, means of", k, "rollouts:",
          " ".join(f"{sum(v for _, v in rewards[i:i+k])/len(rewards[i:i+k]):.2f}" for i in range(0, len(rewards), k)))
if sft and samples:
    final = sum(samples) / len(samples)
    print(f"held-out accuracy (greedy, {len(samples)} problems): after SFT {sft[-1][1]:.3f}, "
          f"after GRPO {final:.3f} ({final - sft[-1][1]:+.3f} from GRPO)")
PY
