#!/usr/bin/env bash
# NCCL weight transfer trainer (GPU 0) -> receiver process (GPU 1, or GPU 0 too on a one-GPU machine,
# through NCCL's socket transport: see one_gpu_nccl.hpp): Qwen3-0.6B and Qwen3-4B shapes,
# packed and unpacked, each against a raw ncclBroadcast of the same bytes. One JSON line per case.
# From the repository root on a 2-GPU machine, after the build (BUILD: default build-gpu; source
# /opt/vime-deps/env.sh first so PyTorch's NCCL is the one loaded):
#   bash tools/weight_transfer_bench/run.sh [rounds] [models] [extra flags, e.g. --tcp-store]
set -euo pipefail
rounds=${1:-5} models=${2:-qwen3-0.6b,qwen3-4b}
shift $(( $# < 2 ? $# : 2 ))
build=${BUILD:-build-gpu}
export NCCL_CUMEM_ENABLE=${NCCL_CUMEM_ENABLE:-0}  # as vime sets it for vLLM servers
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
receiver_gpu=1
[ "${gpus:-0}" -lt 2 ] && receiver_gpu=0 && echo "one GPU: trainer and receiver share it over NCCL's socket transport (read update_over_raw)" >&2
"$build/bin/weight_transfer_bench" bench --models "$models" --rounds "$rounds" --receiver-gpu "$receiver_gpu" "$@"
