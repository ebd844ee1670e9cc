// What the embedded engine runs with: batch and context limits, sampling defaults, EOS ids. The
// flags fill a few fields (from); callers (vime serve's vLLM flags, benches) set the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/engine/sampler.hpp"
#include "vime/model/paged_attention.hpp"
#include "vime/model/paged_decode.hpp"

namespace vime::engine {

struct NativeEngineOptions {
  int64_t max_running_requests = 256;  // sequences decoded together (continuous batch size)
  int64_t max_context_len = 0;         // prompt + output; 0: model max_position_embeddings
  // Tokens per forward (vLLM's --max-num-batched-tokens): decode rows plus prefill chunks; a
  // longer prompt is prefilled in chunks over several steps.
  int64_t max_prefill_tokens = 8192;
  LogProbMode logprob_mode = LogProbMode::kTemperature;
  SamplerPath sampler_path = SamplerPath::kAuto;  // kReference: the CPU path everywhere
  uint64_t seed = 42;                             // draws the seed of each request that has none
  std::vector<int32_t> eos_token_ids;             // empty: the tokenizer's EOS, if any
  // The paged KV cache's size: the first of these that is set gives the number of blocks, and
  // with none the cache grows on demand up to max_running_requests x max_context_len positions.
  // When the blocks run out, running requests are preempted (newest first) and prefilled again
  // later with their output so far.
  int64_t kv_cache_blocks = 0;
  int64_t max_kv_cache_bytes = 0;
  // On CUDA, without the two above: the fraction of the device's memory the process may hold with
  // the cache, after the weights and the activations of a profiled step (0: 0.9, vLLM's default).
  // On the CPU the cache grows on demand instead.
  double gpu_memory_utilization = 0;
  std::string gpu_memory_flag = "--rollout-gpu-memory-utilization";  // its name, for messages
  int64_t kv_block_size = 0;  // tokens per block; 0: 256 where flash reads block tables, else 16
  PagedAttentionPath attention_path = PagedAttentionPath::kAuto;
  // Decode-only steps at fixed shapes (engine::DecodeGraphRunner: vime's paged decode kernel,
  // static buffers padded to batch buckets); unset: on CUDA only. Needs attention_path kAuto.
  std::optional<bool> fixed_shape_decode;
  // ... replayed as CUDA graphs, one per bucket (vLLM's --enforce-eager turns them off).
  bool cuda_graphs = true;
  // How the CUDA decode kernel runs there (split-K, lanes per position); by default its own choice
  // per batch size (benches fix them to compare).
  PagedDecodeKernel decode_kernel;

  // --rollout-seed, --vllm-server-concurrency, --rollout-max-context-len,
  // --rollout-gpu-memory-utilization (or --vllm-gpu-memory-utilization),
  // --vllm-max-num-batched-tokens, --vllm-block-size,
  // --vllm-enforce-eager.
  static NativeEngineOptions from(const Args& args);
};

}  // namespace vime::engine
