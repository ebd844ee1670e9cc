#include "vime/engine/kv_cache_budget.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>
#include <dlfcn.h>

#include <string>
#include <vector>

#include "vime/error.hpp"
#include "vime/model/attention.hpp"
#include "vime/model/paged_forward.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_attention.hpp"

namespace vime::engine {
namespace {

// The device's free and total memory through the CUDA runtime already loaded by LibTorch's CUDA
// build (looked up at run time: no CUDA headers or link dependency here).
bool cuda_memory(size_t& free, size_t& total) {
  using MemGetInfo = int (*)(size_t*, size_t*);
  auto fn = reinterpret_cast<MemGetInfo>(dlsym(RTLD_DEFAULT, "cudaMemGetInfo"));
  return fn != nullptr && fn(&free, &total) == 0;
}

// The blocks that --vllm-gpu-memory-utilization leaves for the cache after the weights (already
// on the device) and the peak of a forward over a full token budget.
int64_t blocks_from_memory_fraction(Model& model, const NativeEngineOptions& options,
                                    int64_t block_size, int64_t max_context) {
  const at::Device device = model.device();
  if (!device.is_cuda())
    throw UsageError(
        "--vllm-gpu-memory-utilization sizes the KV cache on CUDA only; on the CPU use "
        "--rollout-kv-cache-bytes");
  c10::OptionalDeviceGuard guard(device);
  {
    at::AutoGradMode no_grad(false);
    const int64_t tokens = std::min(options.max_prefill_tokens, max_context);
    PagedKvCache scratch(kv_cache_config(model), model.dtype(), device, block_size);
    const int64_t blocks = (tokens + block_size - 1) / block_size;
    scratch.resize(blocks);
    std::vector<int32_t> table(blocks), sequence(tokens, 0);
    for (int64_t i = 0; i < blocks; ++i) table[i] = static_cast<int32_t>(i);
    PagedSequence s{sequence, 0, tokens, &table, true};
    paged_forward(model, scratch, {s}, options.attention_path).sum().item<float>();  // waits
  }
  size_t free = 0, total = 0;
  if (!cuda_memory(free, total))
    throw Error("--vllm-gpu-memory-utilization: cannot read the device's memory (cudaMemGetInfo)");
  // What the process holds now counts the weights, the profiled activations (kept by the caching
  // allocator) and CUDA's own context.
  const double budget = options.gpu_memory_utilization * double(total) - double(total - free);
  const int64_t block_bytes =
      PagedKvCache::block_bytes(kv_cache_config(model), model.dtype(), block_size);
  if (budget < double(block_bytes))
    throw UsageError("--vllm-gpu-memory-utilization " +
                     std::to_string(options.gpu_memory_utilization) +
                     " leaves no memory for the "
                     "KV cache (the process already holds " +
                     std::to_string((total - free) >> 20) + " MiB of " +
                     std::to_string(total >> 20) + " MiB); raise it");
  return static_cast<int64_t>(budget / double(block_bytes));
}

}  // namespace

ModelConfig kv_cache_config(const Model& model) {
  ModelConfig config = model.config();
  config.num_key_value_heads = model.local_kv_heads();
  return config;
}

KvCacheBudget kv_cache_budget(Model& model, const NativeEngineOptions& options,
                              int64_t max_context) {
  KvCacheBudget budget;
  const bool flash_pages =
      flash_attention_available(
          at::empty({0}, at::TensorOptions().dtype(model.dtype()).device(model.device()))) &&
      flash_block_table_available(256);
  budget.block_size = options.kv_block_size > 0 ? options.kv_block_size : (flash_pages ? 256 : 16);
  const int64_t block_bytes =
      PagedKvCache::block_bytes(kv_cache_config(model), model.dtype(), budget.block_size);
  std::string source;
  if (options.kv_cache_blocks > 0) {
    budget.max_blocks = options.kv_cache_blocks;
    source = "--rollout-kv-cache-blocks";
  } else if (options.max_kv_cache_bytes > 0) {
    budget.max_blocks = options.max_kv_cache_bytes / block_bytes;
    source = "--rollout-kv-cache-bytes";
  } else if (options.gpu_memory_utilization > 0) {
    budget.max_blocks = blocks_from_memory_fraction(model, options, budget.block_size, max_context);
    source = "--vllm-gpu-memory-utilization";
  }
  budget.fixed = !source.empty();
  const int64_t context_blocks = (max_context + budget.block_size - 1) / budget.block_size;
  if (!budget.fixed) {
    budget.max_blocks = options.max_running_requests * context_blocks;
  } else if (budget.max_blocks < context_blocks) {
    throw UsageError(
        source + ": the KV cache holds " + std::to_string(budget.max_blocks * budget.block_size) +
        " positions, fewer than one context of " + std::to_string(max_context) + " tokens (" +
        std::to_string(block_bytes) + " bytes per block of " + std::to_string(budget.block_size) +
        "); raise it or lower --rollout-max-context-len");
  }
  return budget;
}

}  // namespace vime::engine
