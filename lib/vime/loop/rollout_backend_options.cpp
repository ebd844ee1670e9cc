#include "vime/loop/rollout_backend_options.hpp"

#include "vime/core/args_lookup.hpp"
#include "vime/loop/async_options.hpp"

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
  if (o.kind == RolloutBackendKind::kNative && !core::flag_on(args, "colocate") &&
      (args.is_set("rollout_num_gpus") || AsyncOptions::from(args).on())) {
    o.engine_replicas = args.get_optional_int("rollout_num_gpus").value_or(1);
  }
  return o;
}

}  // namespace vime::loop
