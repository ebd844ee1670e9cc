#!/usr/bin/env bash
# The [loop] on the GPU machine (after scripts/gpu_test.sh built build-gpu/): GRPO on the arithmetic
# task with a random-init Qwen3-0.6B-shape model (bf16, HF format written by transformers) and the
# real Qwen3 tokenizer, --ci-test on; then the engine's throughput against HF generate().
# GPUS=N trains on N data-parallel ranks (vime's launcher; rollout on every rank); MODEL=qwen3-4b
# for the larger shape; LOOP_FLAGS are appended (a flag given twice: the last one wins).
# Carry .cache/assets/tokenizer-qwen3. Results in $OUT (gpu_loop_metrics.jsonl, logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
source /opt/vime-deps/env.sh
w=$(mktemp -d)
python3 tools/engine_bench/make_hf_model.py --model ${MODEL:-qwen3-0.6b} \
  --tokenizer-dir .cache/assets/tokenizer-qwen3 --out "$w/model" || exit 1
build-gpu/bin/make_arith_task --out "$w/task" > /dev/null || exit 1
build-gpu/bin/vime train --hf-checkpoint "$w/model" --prompt-data "$w/task/data/train.jsonl" \
  --input-key input --label-key label --rm-type math --advantage-estimator grpo --bf16 \
  --rollout-batch-size 64 --n-samples-per-prompt 8 --global-batch-size 256 \
  --rollout-max-response-len ${RESPONSE_LEN:-256} --use-dynamic-batch-size --max-tokens-per-gpu 16384 \
  --lr 1e-6 --num-rollout ${ROLLOUTS:-4} --ci-test --metrics-jsonl "$out/gpu_loop_metrics${GPUS:+_$GPUS}.jsonl" \
  --actor-num-nodes 1 --actor-num-gpus-per-node ${GPUS:-1} ${LOOP_FLAGS:-} \
  > "$out/gpu_loop${GPUS:+_$GPUS}.log" 2>&1
rc=$?
grep -E "error|perf/step_time|train_rollout_logprob" "$out/gpu_loop${GPUS:+_$GPUS}.log" | cut -c1-400 | tail -12
[ "${BENCH:-1}" = 1 ] && bash tools/engine_bench/run.sh qwen3-0.6b ${PROMPTS:-256} 128 ${NEW:-512} cuda 2>&1 | tail -3
exit $rc
