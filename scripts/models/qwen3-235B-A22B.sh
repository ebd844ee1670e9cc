# Qwen/Qwen3-235B-A22B (HF config.json): 94 MoE layers of 128 experts (top-8, renormalised, expert
# width 1536), untied embeddings, q/k RMSNorm. The MoE flags are slime's
# scripts/models/qwen3-235B-A22B.sh.
MODEL_ARGS=(
   --swiglu
   --num-layers 94
   --hidden-size 4096
   --ffn-hidden-size 12288
   --num-attention-heads 64
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
   --moe-ffn-hidden-size 1536
   --moe-layer-freq "[1]*94"
   --moe-router-score-function softmax
   --moe-router-dtype fp32
   --moe-token-dispatcher-type alltoall
   --moe-grouped-gemm
   --moe-permute-fusion
   --moe-token-drop-policy probs
   --moe-aux-loss-coeff 0
)
