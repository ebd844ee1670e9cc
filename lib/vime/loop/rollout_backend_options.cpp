#include "vime/loop/rollout_backend_options.hpp"

namespace vime::loop {

RolloutBackendOptions RolloutBackendOptions::from(const Args& args) {
  RolloutBackendOptions o;
  o.vllm_flags = args.vllm_passthrough();
  bool vllm = !o.vllm_flags.empty();
  for (const char* key : {"rollout_external_engine_addrs", "vllm_router_ip", "vllm_config"}) {
    if (args.is_set(key)) vllm = true;
  }
  if (args.is_set("rollout_backend")) vllm = args.get_string("rollout_backend") == "vllm";
  o.kind = vllm ? RolloutBackendKind::kVllm : RolloutBackendKind::kNative;
  return o;
}

}  // namespace vime::loop
