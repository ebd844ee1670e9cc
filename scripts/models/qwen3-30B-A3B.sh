# Qwen/Qwen3-30B-A3B (HF config.json): 48 MoE layers of 128 experts (top-8, renormalised, expert
# width 768), untied embeddings, q/k RMSNorm. The MoE flags are slime's scripts/models/qwen3-30B-A3B.sh.
# The Qwen3-30B-A3B-*-2507 models use the same shape with MODEL_ARGS_ROTARY_BASE=10000000.
MODEL_ARGS=(
   --swiglu
   --num-layers 48
   --hidden-size 2048
   --ffn-hidden-size 6144
   --num-attention-heads 32
   --group-query-attention
   --num-query-groups 4
   --use-rotary-position-embeddings
   --disable-bias-linear
   --normalization "RMSNorm"
   --norm-epsilon 1e-6
   --rotary-base "${MODEL_ARGS_ROTARY_BASE:-1000000}"
   --vocab-size 151936
   --kv-channels 128
   --qk-layernorm
   --untie-embeddings-and-output-weights

   # moe
   --num-experts 128
   --moe-router-topk 8
   --moe-ffn-hidden-size 768
   --moe-layer-freq "[1]*48"
   --moe-router-score-function softmax
   --moe-router-dtype fp32
   --moe-token-dispatcher-type alltoall
   --moe-grouped-gemm
   --moe-permute-fusion
   --moe-token-drop-policy probs
   --moe-aux-loss-coeff 0
)
