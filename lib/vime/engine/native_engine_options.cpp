#include "vime/engine/native_engine_options.hpp"

namespace vime::engine {

NativeEngineOptions NativeEngineOptions::from(const Args& args) {
  NativeEngineOptions options;
  options.seed = static_cast<uint64_t>(args.get_optional_int("rollout_seed").value_or(42));
  if (auto n = args.get_optional_int("vllm_server_concurrency")) options.max_running_requests = *n;
  if (auto n = args.get_optional_int("rollout_max_context_len")) options.max_context_len = *n;
  return options;
}

}  // namespace vime::engine
