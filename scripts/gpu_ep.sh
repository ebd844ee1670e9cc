#!/usr/bin/env bash
# Expert parallelism on NCCL (after build-gpu/ is built with vime_tests and ep_worker): the
# [dist_tp] expert-parallel tests with each ep_worker rank on its own GPU (VIME_EP_DEVICE=cuda):
# EP 2 equals EP 1 over 2 GPUs (logits, gradients, SFT steps, checkpoints across EP 2 and 1; the
# 4-rank GRPO case with the distributed optimizer when 4 GPUs are visible). Needs 2 GPUs; on
# fewer it says so and exits 0. Results in $OUT/ep_tests.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu-logs}
mkdir -p "$out"
[ -f /opt/vime-deps/env.sh ] && source /opt/vime-deps/env.sh
export NCCL_NVLS_ENABLE=0
n=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "gpus: $n ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
if [ "$n" -lt 2 ]; then
  echo "skipped: expert parallelism over NCCL needs 2 GPUs, this host has $n"
  exit 0
fi
VIME_EP_DEVICE=cuda VIME_EP_MAX_RANKS=$n build-gpu/bin/vime_tests \
  "expert parallel SFT equals*,expert parallel GRPO over 4 ranks*" \
  > "$out/ep_tests.log" 2>&1
rc=$?
echo "expert-parallel tests on NCCL: rc $rc $(tail -2 "$out/ep_tests.log" | tr '\n' ' ')"
exit $rc
