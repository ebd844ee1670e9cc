# zai-org/GLM-4.5-Air (HF Glm4MoeForCausalLM): 1 dense layer then 45 MoE layers of 128 experts
# (sigmoid routing with the fp32 correction bias, top-8 renormalised, expert width 1408) and one
# ungated shared expert; GQA 96 query heads over 8 key/value heads of size 128 with q/k/v biases,
# no q/k norm, RoPE on the first half of each head. The flags are slime's
# scripts/models/glm4.5-106B-A12B.sh, which leaves --moe-router-topk-scaling-factor unset (1).
N_DENSE_LAYERS=1
N_MOE_LAYERS=45

MODEL_ARGS=(
    --disable-bias-linear
    --group-query-attention
    --num-attention-heads 96
    --num-query-groups 8
    --kv-channels 128
    --num-layers $((N_DENSE_LAYERS + N_MOE_LAYERS))
    --hidden-size 4096
    --ffn-hidden-size 10944

    --add-qkv-bias
    --normalization RMSNorm
    --position-embedding-type rope
    --rotary-percent 0.5
    --swiglu
    --untie-embeddings-and-output-weights
    --vocab-size 151552
    --rotary-base 1000000

    # moe
    --moe-ffn-hidden-size 1408
    --moe-shared-expert-intermediate-size 1408
    --moe-router-pre-softmax
    --moe-router-score-function sigmoid
    --moe-router-enable-expert-bias
    --moe-router-bias-update-rate 0
    --moe-router-load-balancing-type seq_aux_loss
    --moe-token-dispatcher-type alltoall
    --moe-router-topk 8
    --moe-layer-freq [0]*$N_DENSE_LAYERS+[1]*$N_MOE_LAYERS
    --num-experts 128
    --moe-grouped-gemm
    --moe-router-dtype fp32
    --moe-permute-fusion
    --moe-aux-loss-coeff 0
)
