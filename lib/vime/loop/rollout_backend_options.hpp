// Which rollout backend a run uses (make_rollout_backend), read once from the flags.
#pragma once

#include <optional>
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

  // The embedded backend disaggregated (make_replica_backend): this many engine replicas when
  // --rollout-num-gpus is given without --colocate, or --async/--fully-async runs (default 1);
  // unset: the engine generates with the trainer's own model, as before.
  std::optional<int64_t> engine_replicas;

  static RolloutBackendOptions from(const Args& args);
};

}  // namespace vime::loop
