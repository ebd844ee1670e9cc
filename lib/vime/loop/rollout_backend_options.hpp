// Which rollout backend a run uses (make_rollout_backend), read once from the flags.
#pragma once

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

  static RolloutBackendOptions from(const Args& args);
};

}  // namespace vime::loop
