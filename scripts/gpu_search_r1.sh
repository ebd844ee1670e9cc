#!/usr/bin/env bash
# Search-R1 on the GPU machine (after scripts/gpu_test.sh or scripts/build.sh built build-gpu/):
# GRPO on the synthetic search task (make_search_task: fictional people, answers only in the
# corpus) with a random-init Qwen3-0.6B-shape model (bf16, the real Qwen3 tokenizer and its ChatML
# template), `vime retrieve serve` as the retrieval server, and the card's spelling
#   vime train --rollout-plugin build-gpu/plugins/search_r1.so
# Prints samples/s and retrieval time per rollout step, then retrieval_bench (100k passages). Carry .cache/assets/tokenizer-qwen3.
# Knobs: ROLLOUTS (3), RBS (32 prompts), N (8 samples each), RESPONSE_LEN (512), PEOPLE (5000).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
w=$(mktemp -d)
python3 tools/engine_bench/make_hf_model.py --model qwen3-0.6b \
  --tokenizer-dir .cache/assets/tokenizer-qwen3 --out "$w/model" || exit 1
build-gpu/bin/make_search_task --out "$w/task" --people ${PEOPLE:-5000} --num-train 2048 \
  --num-test 64 > /dev/null || exit 1
port=${PORT:-8000}
build-gpu/bin/vime retrieve serve --corpus "$w/task/corpus.jsonl" --index "$w/index" \
  --port "$port" > "$out/retrieve.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
printf 'search_url: http://127.0.0.1:%s/retrieve\nmax_turns: 2\ntopk: 3\n' "$port" > "$w/search.yaml"
start=$(date +%s.%N)
build-gpu/bin/vime train --rollout-plugin build-gpu/plugins/search_r1.so \
  --hf-checkpoint "$w/model" --prompt-data "$w/task/data/train.jsonl" --input-key prompt \
  --label-key reward_model --apply-chat-template --custom-config-path "$w/search.yaml" \
  --advantage-estimator grpo --use-kl-loss --kl-loss-coef 0.001 --kl-loss-type low_var_kl \
  --eps-clip 0.2 --eps-clip-high 0.28 --bf16 --rollout-batch-size ${RBS:-32} \
  --n-samples-per-prompt ${N:-8} --global-batch-size $(( ${RBS:-32} * ${N:-8} )) \
  --rollout-max-response-len ${RESPONSE_LEN:-512} --use-dynamic-batch-size \
  --max-tokens-per-gpu 16384 --lr 1e-6 --num-rollout ${ROLLOUTS:-3} \
  --metrics-jsonl "$out/search_r1_metrics.jsonl" \
  --save-debug-rollout-data "$out/search_r1_rollout_{rollout_id}.json" > "$out/search_r1.log" 2>&1
rc=$?
end=$(date +%s.%N)
grep -E "error|rollout [0-9]+:" "$out/search_r1.log" | cut -c1-300 | tail -8
tail -2 "$out/retrieve.log"
python3 - "$out" "$start" "$end" <<'PY'
import glob, json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
metrics = [json.loads(l) for l in open(f"{out}/search_r1_metrics.jsonl")]
series = {k: [m[k] for m in metrics if k in m]
          for k in ("perf/step_time", "perf/rollout_time", "rollout/raw_reward")}
samples = 0
for path in sorted(glob.glob(f"{out}/search_r1_rollout_*.json")):
    doc = json.load(open(path))
    s = doc["samples"]
    samples += len(s)
    stats = [x.get("metadata", {}).get("search_r1", {}) for x in s]
    calls = sum(st.get("search_calls", 0) for st in stats)
    search_s = sum(st.get("search_time_s", 0.0) for st in stats)
    print(f"rollout {doc['rollout_id']}: {len(s)} samples, {calls} searches, retrieval time "
          f"{search_s:.2f} s summed over samples ({1000 * search_s / max(calls, 1):.1f} ms/search)")
for i, st in enumerate(series["perf/step_time"]):
    rt = series["perf/rollout_time"][i] if i < len(series["perf/rollout_time"]) else None
    rw = series["rollout/raw_reward"][i] if i < len(series["rollout/raw_reward"]) else None
    print(f"step {i}: step_time {st:.2f} s, rollout_time {rt} s, raw_reward {rw}")
times = series["perf/step_time"]
if times:
    print(f"samples/s: {samples / sum(times):.2f} ({samples} samples over {len(times)} steps); "
          f"wall {end - start:.0f} s")
PY
echo "BM25 throughput on a 100k-passage synthetic corpus (queries/s):"
build-gpu/bin/retrieval_bench --docs 100000 --queries 8000
exit $rc
