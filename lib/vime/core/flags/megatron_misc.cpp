// Megatron implementation knobs: kernel fusions, attention backends, dropout, initialization,
// tokenizer and MoE kernel choices. They tune Megatron's own code and mean nothing for vime's,
// which is accepted so slime scripts run unchanged (kNoEffect). The one exception is
// --tensorboard-dir, which vime honours.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    // --- logging vime honours
    {"--tensorboard-dir", kString, nullptr,
     "Write TensorBoard event files to this directory (Megatron's flag; vime honours it)."},

    // --- attention and transformer implementation
    {"--attention-backend", kString, "auto", "Megatron's attention kernel choice.", kNoEffect,
     "flash|fused|unfused|local|auto"},
    {"--transformer-impl", kString, "transformer_engine",
     "Megatron's layer implementation (Transformer Engine or local).", kNoEffect,
     "local|transformer_engine"},
    {"--use-flash-attn", kStoreTrue, nullptr,
     "Use FlashAttention in Megatron's attention.", kNoEffect},
    {"--use-mcore-models", kStoreTrue, nullptr,
     "Use Megatron-Core models (deprecated; now the default).",
     kNoEffect, {}, "deprecated_use_mcore_models"},
    {"--use-legacy-models", kStoreTrue, nullptr,
     "Use Megatron's legacy (non-Core) models.", kNoEffect},
    {"--enable-experimental", kStoreTrue, nullptr, "Enable Megatron's experimental features.",
     kNoEffect},
    {"--use-te-activation-func", kStoreTrue, nullptr,
     "Use Transformer Engine's activation kernel in the MLP.", kNoEffect},

    // --- dropout (vime trains without dropout)
    {"--attention-dropout", kFloat, "0.1",
     "Dropout on attention probabilities; vime trains without dropout.", kNoEffect},
    {"--hidden-dropout", kFloat, "0.1",
     "Dropout on the hidden states; vime trains without dropout.", kNoEffect},

    // --- kernel fusions
    {"--no-masked-softmax-fusion", kStoreFalse, nullptr,
     "Do not fuse scaling, masking and softmax.", kNoEffect, {}, "masked_softmax_fusion"},
    {"--no-bias-gelu-fusion", kStoreFalse, nullptr, "Do not fuse bias and GeLU.", kNoEffect, {},
     "bias_gelu_fusion"},
    {"--no-bias-swiglu-fusion", kStoreFalse, nullptr, "Do not fuse bias and SwiGLU.", kNoEffect, {},
     "bias_swiglu_fusion"},
    {"--no-bias-dropout-fusion", kStoreFalse, nullptr,
     "Do not fuse bias, dropout and residual add.",
     kNoEffect, {}, "bias_dropout_fusion"},
    {"--no-rope-fusion", kStoreFalse, nullptr, "Do not use the fused RoPE kernel.", kNoEffect, {},
     "apply_rope_fusion"},
    {"--no-gradient-accumulation-fusion", kStoreFalse, nullptr,
     "Do not fuse gradient accumulation into the weight-gradient GEMM.", kNoEffect, {},
     "gradient_accumulation_fusion"},
    {"--no-persist-layer-norm", kStoreTrue, nullptr,
     "Do not use the persistent fused layer-norm kernel.", kNoEffect},
    {"--cross-entropy-loss-fusion", kStoreTrue, nullptr, "Fuse the cross-entropy loss computation.",
     kNoEffect},
    {"--cross-entropy-fusion-impl", kString, "native", "Implementation of the fused cross entropy.",
     kNoEffect, "native|te"},
    {"--use-fused-weighted-squared-relu", kStoreTrue, nullptr,
     "Use the fused weighted squared-ReLU kernel in MoE.", kNoEffect},

    // --- MoE kernels and dispatch (no MoE in vime yet; --num-experts is refused)
    {"--moe-grouped-gemm", kStoreTrue, nullptr,
     "Run local experts as one grouped GEMM.", kNoEffect},
    {"--moe-use-legacy-grouped-gemm", kStoreTrue, nullptr, "Use the legacy GroupedMLP.", kNoEffect},
    {"--moe-permute-fusion", kStoreTrue, nullptr, "Fuse the token permutation of MoE dispatch.",
     kNoEffect},
    {"--moe-router-fusion", kStoreTrue, nullptr, "Fuse top-k routing and the aux-loss computation.",
     kNoEffect},
    {"--moe-token-dispatcher-type", kString, "allgather", "How tokens are sent to their experts.",
     kNoEffect, "allgather|alltoall|flex"},
    {"--moe-enable-deepep", kStoreTrue, nullptr, "Dispatch tokens with DeepEP.", kNoEffect},
    {"--moe-deepep-num-sms", kInt, "20", "SMs DeepEP may use.", kNoEffect},
    {"--moe-shared-expert-overlap", kStoreTrue, nullptr,
     "Overlap shared-expert compute with token dispatch.", kNoEffect},
    {"--moe-router-padding-for-fp8", kStoreTrue, nullptr,
     "Pad per-expert token counts to fp8-friendly multiples.", kNoEffect},
    {"--moe-per-layer-logging", kStoreTrue, nullptr,
     "Log MoE auxiliary losses per layer.", kNoEffect},
    {"--overlap-moe-expert-parallel-comm", kStoreTrue, nullptr,
     "Overlap expert-parallel all-to-all with compute.", kNoEffect},
    {"--delay-wgrad-compute", kStoreTrue, nullptr,
     "Delay weight-gradient GEMMs for batch-level overlap.", kNoEffect},

    // --- FSDP and sharding modes (vime shards optimizer state with its own distributed optimizer)
    {"--use-torch-fsdp2", kStoreTrue, nullptr, "Wrap the model in PyTorch FSDP2.", kNoEffect},
    {"--torch-fsdp2-no-reshard-after-forward", kStoreFalse, nullptr,
     "Keep FSDP2 weights gathered after the forward pass.", kNoEffect, {},
     "torch_fsdp2_reshard_after_forward"},
    {"--use-megatron-fsdp", kStoreTrue, nullptr,
     "Use Megatron's FSDP data-parallel path.", kNoEffect},
    {"--data-parallel-sharding-strategy", kString, "no_shard",
     "What Megatron FSDP shards.", kNoEffect,
     "no_shard|optim|optim_grads|optim_grads_params"},
    {"--init-model-with-meta-device", kStoreTrue, nullptr,
     "Build the model on the meta device first.",
     kNoEffect},

    // --- CUDA graphs and runtime housekeeping
    {"--cuda-graph-impl", kString, "none", "How Megatron captures CUDA graphs.", kNoEffect,
     "none|local|transformer_engine"},
    {"--cuda-graph-scope", kString, "full", "What a captured CUDA graph covers.", kNoEffect,
     "full|attn|full_iteration"},
    {"--enable-cuda-graph", kStoreTrue, nullptr, "Capture CUDA graphs (deprecated spelling).",
     kNoEffect},
    {"--external-cuda-graph", kStoreTrue, nullptr,
     "Capture CUDA graphs with Transformer Engine (deprecated spelling).", kNoEffect},
    {"--te-rng-tracker", kStoreTrue, nullptr, "Use Transformer Engine's RNG tracker.", kNoEffect},
    {"--manual-gc", kStoreTrue, nullptr, "Run Python garbage collection at fixed points only.",
     kNoEffect},
    {"--manual-gc-interval", kInt, "0", "Steps between manual garbage collections.", kNoEffect},
    {"--no-manual-gc-eval", kStoreFalse, nullptr,
     "Skip manual garbage collection around evaluation.",
     kNoEffect, {}, "manual_gc_eval"},
    {"--empty-unused-memory-level", kInt, "0",
     "How often Megatron empties the CUDA cache.", kNoEffect,
     "0|1|2"},
    {"--no-check-for-nan-in-loss-and-grad", kStoreFalse, nullptr,
     "Skip Megatron's NaN check of the loss and gradients.", kNoEffect, {},
     "check_for_nan_in_loss_and_grad"},
    {"--check-for-spiky-loss", kStoreTrue, nullptr,
     "Check for loss spikes (Megatron's rerun engine).",
     kNoEffect},
    {"--check-for-large-grads", kStoreTrue, nullptr,
     "Check for unexpectedly large gradients (Megatron's rerun engine).", kNoEffect},
    {"--dataloader-type", kString, nullptr, "Megatron's pretraining data-loader type.", kNoEffect,
     "single|cyclic|external"},
    {"--num-workers", kInt, "2", "Megatron's data-loader worker processes.", kNoEffect},
    {"--no-create-attention-mask-in-dataloader", kStoreFalse, nullptr,
     "Do not build attention masks in Megatron's data loader.", kNoEffect, {},
     "create_attention_mask_in_dataloader"},

    // --- initialization (vime initializes from checkpoints)
    {"--init-method-std", kFloat, "0.02",
     "Standard deviation of random weight initialization; vime initializes from checkpoints.",
     kNoEffect},
    {"--embedding-init-method-std", kFloat, nullptr,
     "Standard deviation of random embedding initialization.", kNoEffect},
    {"--init-method-xavier-uniform", kStoreTrue, nullptr, "Initialize weights Xavier-uniform.",
     kNoEffect},
    {"--data-parallel-random-init", kStoreTrue, nullptr,
     "Initialize weights differently on each data-parallel rank.", kNoEffect},
    {"--use-cpu-initialization", kStoreTrue, nullptr, "Initialize weights on the CPU.", kNoEffect},
    {"--no-initialization", kStoreFalse, nullptr,
     "Skip random weight initialization.", kNoEffect, {},
     "perform_initialization"},

    // --- tokenizer (vime reads the Hugging Face tokenizer of --hf-checkpoint)
    {"--tokenizer-type", kString, nullptr,
     "Megatron's tokenizer class; vime reads the tokenizer of --hf-checkpoint.", kNoEffect,
     "BertWordPieceLowerCase|BertWordPieceCase|GPT2BPETokenizer|SentencePieceTokenizer|"
     "GPTSentencePieceTokenizer|HuggingFaceTokenizer|Llama2Tokenizer|TikTokenizer|"
     "MultimodalTokenizer|NullTokenizer|NullMultimodalTokenizer|SFTTokenizer"},
    {"--tokenizer-model", kString, nullptr,
     "Megatron's tokenizer model path; vime reads the tokenizer of --hf-checkpoint.", kNoEffect},
    {"--vocab-file", kString, nullptr, "Megatron's tokenizer vocabulary file.", kNoEffect},
    {"--merge-file", kString, nullptr, "Megatron's BPE merge file.", kNoEffect},
};
}  // namespace
FlagGroup megatron_misc() {
  return {"megatron_misc", "Megatron implementation knobs (no effect in vime)", kFlags};
}
}  // namespace vime::core::flags
