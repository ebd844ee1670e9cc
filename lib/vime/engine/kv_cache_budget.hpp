// How many KV cache blocks the NativeEngine may use: an explicit count, a byte budget, or vLLM's
// --gpu-memory-utilization (on CUDA: the fraction of the device's memory the process may hold,
// measured after a profiled forward of a full token budget, so weights and activations are
// counted); with none of them, the engine's own limits (max_running_requests x context).
#pragma once

#include <cstdint>

#include "vime/engine/native_engine_options.hpp"
#include "vime/model/model_config.hpp"

namespace vime {
class Model;
}

namespace vime::engine {

struct KvCacheBudget {
  int64_t block_size = 16;
  int64_t max_blocks = 0;
  bool fixed = false;  // a configured size: allocated at once rather than grown on demand
};

// The shape of this rank's KV cache: the model's, with the KV heads this rank computes (its
// tensor-parallel share).
ModelConfig kv_cache_config(const Model& model);

// Throws vime::UsageError naming the setting when the budget cannot hold one full context.
KvCacheBudget kv_cache_budget(Model& model, const NativeEngineOptions& options,
                              int64_t max_context);

}  // namespace vime::engine
