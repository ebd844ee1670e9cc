#!/usr/bin/env bash
# The async figures: the 0.6B GRPO loop of scripts/gpu_loop.sh (random-init Qwen3-0.6B
# shape, bf16, arithmetic task, 64 prompts x 8 samples, 256 new tokens) run
#   sync_colocated  1 GPU: the embedded engine generates with the trainer's own model
#   sync_disagg     2 GPUs: an engine replica on cuda:1 (--rollout-num-gpus 1), in turn
#   async_disagg    2 GPUs: the same, --async (rollout k+1 generates while k trains)
#   fully_async     2 GPUs: --fully-async --max-staleness 2
#   vllm_sync, vllm_async (only when named in RUNS): one launched `vime serve` engine on cuda:1
#                   behind the vLLM backend, NCCL weights, in turn / --async
# then one summary line each (tools/async_bench/summarize.py) and the trainer -> replica weight
# copy against raw copies of the same bytes (replica_copy_bench). Needs build-gpu/ with vime_app,
# make_arith_task and replica_copy_bench, and .cache/assets/tokenizer-qwen3.
#   ROLLOUTS=4 RESPONSE_LEN=256 RUNS="sync_colocated async_disagg" bash tools/async_bench/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
B=${BUILD:-build-gpu}/bin
w=$(mktemp -d)
python3 tools/engine_bench/make_hf_model.py --model qwen3-0.6b \
  --tokenizer-dir .cache/assets/tokenizer-qwen3 --out "$w/model" > /dev/null || exit 1
"$B/make_arith_task" --out "$w/task" > /dev/null || exit 1
common=(--hf-checkpoint "$w/model" --prompt-data "$w/task/data/train.jsonl" --input-key input
  --label-key label --rm-type math --advantage-estimator grpo --bf16 --rollout-batch-size 64
  --n-samples-per-prompt 8 --global-batch-size 256 --rollout-max-response-len ${RESPONSE_LEN:-256}
  --use-dynamic-batch-size --max-tokens-per-gpu 16384 --lr 1e-6 --num-rollout ${ROLLOUTS:-4}
  --actor-num-nodes 1 --actor-num-gpus-per-node 1 --use-tis)
declare -A flags=(
  [sync_colocated]=""
  [sync_disagg]="--rollout-num-gpus 1"
  [async_disagg]="--rollout-num-gpus 1 --async"
  [fully_async]="--rollout-num-gpus 1 --fully-async --max-staleness 2"
  [vllm_sync]="--rollout-backend vllm --rollout-num-gpus 1 --update-weight-transport nccl"
  [vllm_async]="--rollout-backend vllm --rollout-num-gpus 1 --update-weight-transport nccl --async"
)
export VIME_VLLM_COMMAND="$(cd "$B" && pwd)/vime serve"
summary=()
for run in ${RUNS:-sync_colocated sync_disagg async_disagg fully_async}; do
  start=$(date +%s)
  # shellcheck disable=SC2086
  timeout ${RUN_TIMEOUT:-110} "$B/vime" train "${common[@]}" ${flags[$run]} \
    --metrics-jsonl "$out/$run.jsonl" > "$out/$run.log" 2>&1
  echo "== $run: exit $? in $(( $(date +%s) - start )) s"
  grep -E "error|replica|generating with" "$out/$run.log" | cut -c1-300 | head -4
  summary+=("$run=$out/$run.jsonl")
done
python3 tools/async_bench/summarize.py 512 "${summary[@]}" | tee "$out/summary.jsonl"
echo "== replica weight copy (trainer cuda:0 -> replica cuda:1, bf16)"
timeout 120 "$B/replica_copy_bench" --models ${COPY_MODELS:-qwen3-0.6b,qwen3-4b} --rounds 5 2>&1 |
  tee "$out/replica_copy.jsonl"
