// `vime serve MODEL_DIR [vllm serve flags]`: `vllm serve`'s command line as vime's launcher writes
// it, on top of `vime train`'s flags (the engine's). vLLM tuning flags with no meaning for vime's
// engine are kNoEffect: accepted and reported on stderr as ignored.
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;

// A vLLM tuning flag vime serve accepts and ignores.
constexpr FlagSpec ignored(std::string_view name, FlagKind kind = kString) {
  return {name, kind, nullptr, "vLLM tuning; does not apply to vime's engine", kNoEffect};
}

constexpr FlagSpec kFlags[] = {
    {"MODEL_DIR", kString, nullptr, "the model to serve, as --hf-checkpoint DIR"},
    {"--host", kString, "127.0.0.1", "listen address"},
    {"--port", kInt, "8000", "listen port (0: any free port)"},
    {"--api-key", kString, nullptr,
     "require \"Authorization: Bearer KEY\" on every route but /health"},
    {"--served-model-name", kString, nullptr,
     "model id in /v1/models and responses (default: the model dir)"},
    {"--seed", kInt, nullptr,
     "the engine's seed; requests without a seed draw from it (default: --rollout-seed)"},
    {"--max-model-len", kInt, nullptr,
     "prompt + output tokens per request (--rollout-max-context-len)"},
    {"--max-num-seqs", kInt, nullptr,
     "requests decoded together (--vllm-server-concurrency; default 256); the server takes at "
     "least 512 requests at once and queues those past it"},
    {"--max-num-batched-tokens", kInt, nullptr,
     "tokens per engine step: decode rows plus prefill chunks (chunked prefill)"},
    {"--logprobs-mode", kString, nullptr,
     "processed_logprobs (after temperature, top-k/top-p; vLLM's RL mode) or raw_logprobs "
     "(log_softmax of the logits / temperature). prompt_logprobs are log_softmax(logits / the "
     "request's temperature) over the whole vocabulary under either (no top-k/top-p; "
     "temperature 0 counts as 1): the trainer's log-probs",
     kYes, "processed_logprobs|raw_logprobs"},
    {"--dtype", kString, "auto",
     "parameter dtype (auto: --bf16/--fp16 if given, else on CUDA the checkpoint's torch_dtype "
     "with float32 as bfloat16, as vLLM; float32 on the CPU)",
     kYes, "auto|bfloat16|bf16|float16|half|float32|float"},
    {"--gpu-memory-utilization", kFloat, nullptr,
     "(0, 1]: the fraction of the GPU's memory the server may hold with its KV cache (CUDA; "
     "default: the cache grows on demand)"},
    {"--block-size", kInt, nullptr,
     "tokens per KV cache block (default: 256 where flash attention reads block tables, else "
     "16)"},
    {"--enable-sleep-mode", kStoreTrue, nullptr, "mount /sleep and /wake_up"},
    {"--enable-return-routed-experts", kStoreTrue, nullptr,
     "MoE models: /inference/v1/generate returns each token's routed experts "
     "(choices[0].routed_experts, base64 .npy of shape (tokens - 1, layers, topk)), for "
     "--use-rollout-routing-replay"},
    {"--enforce-eager", kStoreTrue, nullptr,
     "decode without CUDA graphs (the paged decode kernel runs eagerly; the CPU has no graphs)"},
    {"--enable-auto-tool-choice", kStoreTrue, nullptr,
     "chat answers carry tool_calls (with --tool-call-parser hermes)"},
    {"--tool-call-parser", kString, nullptr,
     "hermes: <tool_call> JSON (Qwen2.5, Qwen3, Hermes); with --enable-auto-tool-choice"},
    {"--max-request-bytes", kInt, "33554432",
     "largest request body accepted (32 MiB); a larger one is answered 413 without being read "
     "into memory (0: no limit)"},
    {"--weight-transfer-config", kJson, nullptr,
     "{\"backend\": \"disk\"} or {\"backend\": \"nccl\"}"},
    {"--tensor-parallel-size",
     kInt,
     "1",
     "1 only: vime serve runs one GPU",
     kNotYet,
     {},
     {},
     "-tp"},
    {"--pipeline-parallel-size",
     kInt,
     "1",
     "1 only: vime serve runs one GPU",
     kNotYet,
     {},
     {},
     "-pp"},
    {"--data-parallel-size", kInt, "1", "1 only: start one server per GPU", kNotYet, {}, {}, "-dp"},
    {"--nnodes", kInt, "1", "1 only: vime serve runs on one node", kNotYet},
    {"--headless", kStoreTrue, nullptr, "refused: vime serve runs one GPU on one node", kNotYet},
    {"--trust-remote-code", kStoreTrue, nullptr, "vime's behaviour: no remote code is ever run"},
    {"--enable-prompt-tokens-details", kStoreTrue, nullptr,
     "vime's behaviour: usage.prompt_tokens_details is always there"},
    {"--generation-config", kString, "vllm",
     "vime's behaviour is vllm: sampling defaults are vLLM's own, never generation_config.json "
     "(another value is ignored with a line on stderr)"},
    ignored("--swap-space"),
    ignored("--kv-cache-dtype"),
    ignored("--max-seq-len-to-capture"),
    ignored("--cpu-offload-gb"),
    ignored("--compilation-config"),
    {"-O",
     kString,
     nullptr,
     "vLLM's optimization level; does not apply to vime's engine",
     kNoEffect,
     {},
     "optimization_level"},
    ignored("--distributed-executor-backend"),
    ignored("--data-parallel-backend"),
    ignored("--max-logprobs"),
    ignored("--load-format"),
    ignored("--worker-extension-cls"),
    ignored("--uvicorn-log-level"),
    ignored("--scheduling-policy"),
    ignored("--num-gpu-blocks-override"),
    ignored("--long-prefill-token-threshold"),
    ignored("--max-num-partial-prefills"),
    ignored("--cuda-graph-sizes"),
    ignored("--quantization"),
    ignored("--attention-backend"),
    ignored("--node-rank"),
    ignored("--master-addr"),
    ignored("--master-port"),
    ignored("--download-dir"),
    ignored("--reasoning-parser"),
    ignored("--chat-template"),
    ignored("--enable-prefix-caching", kBoolOptional),
    ignored("--enable-chunked-prefill", kBoolOptional),
    ignored("--disable-log-stats", kStoreTrue),
    ignored("--disable-log-requests", kStoreTrue),
    ignored("--enable-log-requests", kStoreTrue),
    ignored("--disable-custom-all-reduce", kStoreTrue),
    ignored("--disable-uvicorn-access-log", kStoreTrue),
    ignored("--async-scheduling", kBoolOptional),
    ignored("--disable-frontend-multiprocessing", kStoreTrue),
};
}  // namespace
FlagGroup serve_command() { return {"serve", "vLLM's flags (vime serve)", kFlags}; }
}  // namespace vime::core::flags
