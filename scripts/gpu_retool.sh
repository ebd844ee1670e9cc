#!/usr/bin/env bash
# ReTool on the GPU machine (after scripts/gpu_test.sh or scripts/build.sh built build-gpu/ with the
# retool and vime_tests targets): first the code sandbox's hostile-snippet and retool tests on this
# host (its kernel decides the isolation), then GRPO with a random-init Qwen3-0.6B-shape model (bf16,
# the real Qwen3 tokenizer and its ChatML template) on arithmetic questions, as the card spells it:
#   vime train --rollout-plugin build-gpu/plugins/retool.so
# Prints samples/s, turns, code runs and sandbox time per rollout step. Carry .cache/assets/tokenizer-qwen3.
# Knobs: ROLLOUTS (3), RBS (32 prompts), N (8 samples each), RESPONSE_LEN (512).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
build-gpu/bin/vime_tests "[sandbox],[retool]" > "$out/retool_tests.log" 2>&1
echo "sandbox + retool tests on this host: exit $? ($(tail -1 "$out/retool_tests.log"))"
w=$(mktemp -d)
python3 tools/engine_bench/make_hf_model.py --model qwen3-0.6b \
  --tokenizer-dir .cache/assets/tokenizer-qwen3 --out "$w/model" || exit 1
python3 - "$w/train.jsonl" <<'PY'
import json, random, sys
rng = random.Random(1)
with open(sys.argv[1], "w") as f:
    for _ in range(2048):
        a, b = rng.randrange(100, 1000), rng.randrange(100, 1000)
        q = f"What is {a} * {b}? Use Python, then give the final answer as Answer: \\boxed{{N}}."
        f.write(json.dumps({"prompt": [{"role": "user", "content": q}], "label": str(a * b)}) + "\n")
PY
printf 'max_turns: 4\nmax_tool_calls: 4\npython_timeout: 10\n' > "$w/retool.yaml"
start=$(date +%s.%N)
build-gpu/bin/vime train --rollout-plugin build-gpu/plugins/retool.so \
  --hf-checkpoint "$w/model" --prompt-data "$w/train.jsonl" --input-key prompt \
  --label-key label --apply-chat-template --reward-key score --custom-config-path "$w/retool.yaml" \
  --advantage-estimator grpo --use-kl-loss --kl-loss-coef 0.0 --kl-loss-type low_var_kl \
  --eps-clip 0.2 --eps-clip-high 0.28 --bf16 --rollout-batch-size ${RBS:-32} \
  --n-samples-per-prompt ${N:-8} --global-batch-size $(( ${RBS:-32} * ${N:-8} )) \
  --rollout-max-response-len ${RESPONSE_LEN:-512} --use-dynamic-batch-size \
  --max-tokens-per-gpu 16384 --lr 1e-6 --num-rollout ${ROLLOUTS:-3} \
  --metrics-jsonl "$out/retool_metrics.jsonl" \
  --save-debug-rollout-data "$out/retool_rollout_{rollout_id}.json" > "$out/retool.log" 2>&1
rc=$?
end=$(date +%s.%N)
grep -E "error|retool:|rollout [0-9]+:" "$out/retool.log" | cut -c1-300 | tail -8
python3 - "$out" "$start" "$end" <<'PY'
import glob, json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
metrics = [json.loads(l) for l in open(f"{out}/retool_metrics.jsonl")]
times = [m["perf/step_time"] for m in metrics if "perf/step_time" in m]
samples = 0
for path in sorted(glob.glob(f"{out}/retool_rollout_*.json")):
    doc = json.load(open(path))
    s = doc["samples"]
    samples += len(s)
    st = [x.get("metadata", {}).get("retool", {}) for x in s]
    turns = sum(x.get("turns", 0) for x in st)
    runs = sum(x.get("code_runs", 0) for x in st)
    calls = sum(x.get("tool_call_count", 0) for x in st)
    secs = sum(x.get("code_time_s", 0.0) for x in st)
    print(f"rollout {doc['rollout_id']}: {len(s)} samples, {turns} turns, {calls} code blocks, "
          f"{runs} sandbox runs, {secs:.2f} s in the sandbox ({1000 * secs / max(runs, 1):.0f} ms/run)")
if times:
    print(f"samples/s: {samples / sum(times):.2f} ({samples} samples over {len(times)} steps); "
          f"wall {end - start:.0f} s")
PY
exit $rc
