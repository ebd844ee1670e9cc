#!/usr/bin/env python3
"""Summarises `vime train --metrics-jsonl` files of the async bars (tools/async_bench/run.sh): per
run, the means over the rollouts between the first (it warms up and, async, generates rollout 0 in
turn) and the last (async, nothing is left to generate while it trains) of perf/step_time, samples/s (rollout batch
x n / step time), perf/rollout_time, perf/train_time, perf/rollout_train_overlap_fraction,
perf/wait_rollout_time, perf/weight_transfer_time, and the version lag.
usage: summarize.py SAMPLES_PER_ROLLOUT label=metrics.jsonl ..."""
import json
import sys


def summarize(path, samples):
    per_step = {}
    for line in open(path):
        row = json.loads(line)
        step = row.get("rollout/step")
        if step is None:
            continue
        per_step.setdefault(step, {}).update(row)
    keys = ["perf/step_time", "perf/rollout_time", "perf/train_time",
            "perf/rollout_train_overlap_fraction", "perf/wait_rollout_time",
            "perf/weight_transfer_time", "perf/update_weights_time",
            "perf/engine_tok_per_s_while_training", "rollout/async/stale_dropped_groups",
            "rollout/async/version_lag_mean"]
    last = max(per_step) if per_step else 0
    steps = [v for k, v in sorted(per_step.items()) if 1 <= k < last] or list(per_step.values())
    out = {"rollouts": len(steps)}
    for k in keys:
        vals = [s[k] for s in steps if k in s]
        if vals:
            out[k] = round(sum(vals) / len(vals), 4)
    if out.get("perf/step_time"):
        out["samples_per_s"] = round(samples / out["perf/step_time"], 2)
    return out


def main():
    samples = int(sys.argv[1])
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        try:
            print(json.dumps({"run": label, **summarize(path, samples)}))
        except OSError as e:
            print(json.dumps({"run": label, "error": str(e)}))


if __name__ == "__main__":
    main()
