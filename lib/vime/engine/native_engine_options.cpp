#include "vime/engine/native_engine_options.hpp"

#include <string>

#include "vime/error.hpp"

namespace vime::engine {
namespace {

// The value of a --vllm-* flag passed through for vLLM that the native engine honours too.
std::optional<double> passthrough_number(const Args& args, const std::string& name) {
  for (const auto& flag : args.vllm_passthrough()) {
    if (flag.name != name) continue;
    try {
      if (flag.values.size() == 1) return std::stod(flag.values[0]);
    } catch (const std::exception&) {
    }
    throw UsageError(name + " takes one number");
  }
  return std::nullopt;
}

bool passthrough_switch(const Args& args, const std::string& name) {
  for (const auto& flag : args.vllm_passthrough()) {
    if (flag.name != name) continue;
    if (flag.values.empty()) return true;
    if (flag.values.size() == 1 && (flag.values[0] == "true" || flag.values[0] == "false"))
      return flag.values[0] == "true";
    throw UsageError(name + " takes no value");
  }
  return false;
}

int64_t positive(const std::string& name, double value) {
  if (!(value >= 1) || value != static_cast<double>(static_cast<int64_t>(value)))
    throw UsageError(name + " must be a positive integer");
  return static_cast<int64_t>(value);
}

}  // namespace

NativeEngineOptions NativeEngineOptions::from(const Args& args) {
  NativeEngineOptions options;
  options.seed = static_cast<uint64_t>(args.get_optional_int("rollout_seed").value_or(42));
  if (auto n = args.get_optional_int("vllm_server_concurrency")) options.max_running_requests = *n;
  if (auto n = args.get_optional_int("rollout_max_context_len")) options.max_context_len = *n;
  if (auto n = args.get_optional_int("rollout_kv_cache_blocks"))
    options.kv_cache_blocks = positive("--rollout-kv-cache-blocks", double(*n));
  if (auto n = args.get_optional_int("rollout_kv_cache_bytes"))
    options.max_kv_cache_bytes = positive("--rollout-kv-cache-bytes", double(*n));
  if (auto f = passthrough_number(args, "--vllm-gpu-memory-utilization")) {
    if (!(*f > 0 && *f <= 1)) throw UsageError("--vllm-gpu-memory-utilization must be in (0, 1]");
    options.gpu_memory_utilization = *f;
    options.gpu_memory_flag = "--vllm-gpu-memory-utilization";
  }
  if (auto f = args.get_optional_double("rollout_gpu_memory_utilization")) {
    if (!(*f > 0 && *f <= 1))
      throw UsageError("--rollout-gpu-memory-utilization must be in (0, 1], got " +
                       std::to_string(*f));
    options.gpu_memory_utilization = *f;
    options.gpu_memory_flag = "--rollout-gpu-memory-utilization";
  }
  if (auto n = passthrough_number(args, "--vllm-max-num-batched-tokens"))
    options.max_prefill_tokens = positive("--vllm-max-num-batched-tokens", *n);
  if (auto n = passthrough_number(args, "--vllm-block-size"))
    options.kv_block_size = positive("--vllm-block-size", *n);
  if (passthrough_switch(args, "--vllm-enforce-eager")) options.cuda_graphs = false;
  return options;
}

}  // namespace vime::engine
