# A tiny Qwen3-shaped model for CPU tests (random or converted weights): 2 layers, hidden 64,
# GQA 4 query heads over 2 key/value heads of size 16, q/k RMSNorm, tied embeddings, Qwen vocabulary.
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
)
