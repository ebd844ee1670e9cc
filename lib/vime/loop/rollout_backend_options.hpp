// Which rollout backend a run uses (make_rollout_backend), read once from the flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::loop {

enum class RolloutBackendKind { kNative, kVllm };

struct RolloutBackendOptions {
  // --rollout-backend, else vllm when external engines, a router, --vllm-config or --vllm-* engine
  // flags are given, else native.
  RolloutBackendKind kind = RolloutBackendKind::kNative;
  std::vector<PassthroughFlag>
      vllm_flags;  // --vllm-* engine flags (the native backend refuses them)
  // The --vllm-* flag that chose the vLLM backend (no --rollout-backend, no other vLLM flag such as
  // --vllm-config): a user sizing the embedded engine may not mean it, so the run says so.
  std::string vllm_chosen_by_flag;

  // The embedded backend disaggregated (make_replica_backend): this many engine replicas when
  // --rollout-num-gpus is given without --colocate, or --async/--fully-async runs (default 1);
  // unset: the engine generates with the trainer's own model, as before.
  std::optional<int64_t> engine_replicas;

  // Throws UsageError when the vLLM backend is chosen but the flags give it no engine
  // (launch::gives_engines): it would wait for engines that never come.
  static RolloutBackendOptions from(const Args& args);
};

// "the embedded engine takes no --vllm-* flags (to size it use --rollout-gpu-memory-utilization)"
std::string embedded_engine_hint();

}  // namespace vime::loop
