# Qwen/Qwen2.5-3B (HF config.json): tied embeddings, qkv bias.
# rope_theta is 1000000 in the HF config (slime's preset passes 10000).
MODEL_ARGS=(
   --swiglu
   --num-layers 36
   --hidden-size 2048
   --ffn-hidden-size 11008
   --num-attention-heads 16
   --use-rotary-position-embeddings
   --disable-bias-linear
   --add-qkv-bias
   --normalization "RMSNorm"
   --norm-epsilon 1e-6
   --rotary-base 1000000
   --group-query-attention
   --num-query-groups 2
   --vocab-size 151936
)
