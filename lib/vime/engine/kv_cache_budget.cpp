#include "vime/engine/kv_cache_budget.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "vime/core/runtime_info.hpp"
#include "vime/error.hpp"
#include "vime/model/attention.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_attention.hpp"
#include "vime/model/paged_forward.hpp"

namespace vime::engine {
namespace {

// vLLM's default --gpu-memory-utilization.
constexpr double kDefaultGpuMemoryUtilization = 0.9;

// The activations' peak of one forward over `tokens` new tokens, as one prefill chunk
// (`sequences` == 1) or as that many decode rows of one token each, all wanting logits.
int64_t profiled_peak(Model& model, int64_t tokens, int64_t sequences, int64_t block_size,
                      PagedAttentionPath path) {
  const int device = model.device().index() < 0 ? 0 : model.device().index();
  PagedKvCache scratch(kv_cache_config(model), model.dtype(), model.device(), block_size);
  const int64_t per_sequence = tokens / sequences;
  const int64_t blocks_each = (per_sequence + block_size - 1) / block_size;
  scratch.resize(blocks_each * sequences);
  std::vector<std::vector<int32_t>> tables(sequences);
  std::vector<int32_t> ids(per_sequence, 0);
  std::vector<PagedSequence> batch;
  for (int64_t s = 0; s < sequences; ++s) {
    for (int64_t b = 0; b < blocks_each; ++b)
      tables[s].push_back(static_cast<int32_t>(s * blocks_each + b));
    batch.push_back({ids, 0, per_sequence, &tables[s], true});
  }
  const long long before = core::cuda_allocated_bytes(device);
  core::reset_cuda_peak(device);
  paged_forward(model, scratch, batch, path).sum().item<float>();  // waits
  return std::max<long long>(0, core::cuda_peak_allocated_bytes(device) - before);
}

// vLLM's determine_num_available_blocks: the cache gets `fraction` of the device's memory, less
// what the process holds (the weights, a colocated trainer's state; the caching allocator's free
// blocks returned first, so they do not count), less the peak one step adds on top: a profiled
// forward of a full token budget, the decode graphs' pool (a profiled forward of
// max_running_requests rows, which stays allocated between steps) and the sampler's rows.
int64_t blocks_from_memory_fraction(Model& model, const NativeEngineOptions& options,
                                    double fraction, const std::string& flag, int64_t block_size,
                                    int64_t max_context) {
  const at::Device device = model.device();
  if (!device.is_cuda())
    throw UsageError(flag +
                     " sizes the KV cache on CUDA only; on the CPU use --rollout-kv-cache-bytes");
  const int index = device.index() < 0 ? 0 : device.index();
  c10::OptionalDeviceGuard guard(device);
  int64_t step_peak = 0;
  {
    at::AutoGradMode no_grad(false);
    const int64_t rows = std::min(options.max_running_requests, options.max_prefill_tokens);
    step_peak = profiled_peak(model, std::min(options.max_prefill_tokens, max_context - 1), 1,
                              block_size, options.attention_path);
    if (options.cuda_graphs) {
      step_peak += profiled_peak(model, rows, rows, block_size, options.attention_path);
    }
    // Logits in fp32, their probabilities and the sort of a top-p row.
    step_peak += rows * model.config().vocab_size * int64_t(4) * 3;
  }
  core::empty_cuda_cache();
  const auto memory = core::cuda_memory(index);
  if (!memory) throw Error(flag + ": cannot read the device's memory (cudaMemGetInfo)");
  // The process's own live tensors count against its fraction; and it leaves (1 - fraction) of
  // the device free for others, so processes sharing a GPU (other engines, tests) each get theirs
  // rather than failing in the allocator.
  const double total = double(memory->total);
  const double own = double(memory->allocated);
  const double budget =
      std::min(fraction * total - own, double(memory->free) - (1 - fraction) * total) -
      double(step_peak);
  const int64_t block_bytes =
      PagedKvCache::block_bytes(kv_cache_config(model), model.dtype(), block_size);
  constexpr double kMiB = 1024.0 * 1024.0;
  if (budget < double(block_bytes)) {
    char numbers[256];
    std::snprintf(numbers, sizeof numbers,
                  "the process holds %.0f MiB, %.0f of %.0f MiB are free, and a step needs %.0f "
                  "MiB more",
                  own / kMiB, double(memory->free) / kMiB, total / kMiB, double(step_peak) / kMiB);
    throw UsageError(flag + " " + std::to_string(fraction) +
                     " leaves no memory for the KV cache (" + numbers +
                     "); raise it, free the GPU, or lower --vllm-max-num-batched-tokens or "
                     "--vllm-server-concurrency");
  }
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
  bool by_memory = false;  // sized from the device's memory: capped at what requests can fill
  if (options.kv_cache_blocks > 0) {
    budget.max_blocks = options.kv_cache_blocks;
    source = "--rollout-kv-cache-blocks";
  } else if (options.max_kv_cache_bytes > 0) {
    budget.max_blocks = options.max_kv_cache_bytes / block_bytes;
    source = "--rollout-kv-cache-bytes";
  } else if (options.gpu_memory_utilization > 0 || model.device().is_cuda()) {
    // On CUDA the cache is always sized (never grown until the allocator fails).
    const double fraction = options.gpu_memory_utilization > 0 ? options.gpu_memory_utilization
                                                               : kDefaultGpuMemoryUtilization;
    source = options.gpu_memory_flag;
    by_memory = true;
    budget.max_blocks = blocks_from_memory_fraction(model, options, fraction, source,
                                                    budget.block_size, max_context);
  }
  budget.fixed = !source.empty();
  const int64_t context_blocks = (max_context + budget.block_size - 1) / budget.block_size;
  const int64_t usable_blocks = options.max_running_requests * context_blocks;
  if (!budget.fixed) {
    budget.max_blocks = usable_blocks;
  } else if (by_memory && budget.max_blocks > usable_blocks) {
    budget.max_blocks = usable_blocks;
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
