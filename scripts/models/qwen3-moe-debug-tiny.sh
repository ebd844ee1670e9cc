# A tiny Qwen3-MoE-shaped model for CPU tests (random or converted weights): 2 layers, hidden 64,
# the first a dense MLP of width 128 (mlp_only_layers [0]), the second 8 experts of width 32 with
# top-2 renormalised routing; GQA 4 query heads over 2 key/value heads of size 16, q/k RMSNorm,
# tied embeddings, Qwen vocabulary.
MODEL_ARGS=(
   --swiglu
   --num-layers 2
   --hidden-size 64
   --ffn-hidden-size 128
   --num-attention-heads 4
   --group-query-attention
   --num-query-groups 2
   --use-rotary-position-embeddings
   --disable-bias-linear
   --normalization "RMSNorm"
   --norm-epsilon 1e-6
   --rotary-base 1000000
   --vocab-size 151936
   --kv-channels 16
   --qk-layernorm

   # moe
   --num-experts 8
   --moe-router-topk 2
   --moe-ffn-hidden-size 32
   --moe-layer-freq "[0]*1+[1]*1"
   --moe-router-score-function softmax
   --moe-router-dtype fp32
   --moe-token-dispatcher-type alltoall
   --moe-grouped-gemm
   --moe-permute-fusion
   --moe-aux-loss-coeff 0
)
