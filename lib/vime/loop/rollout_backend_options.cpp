#include "vime/loop/rollout_backend_options.hpp"

#include <algorithm>

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"
#include "vime/launch/engine_plan.hpp"
#include "vime/launch/launch_options.hpp"
#include "vime/loop/async_options.hpp"

namespace vime::loop {

std::string embedded_engine_hint() {
  return "the embedded engine takes no --vllm-* flags (to size it use "
         "--rollout-gpu-memory-utilization)";
}

RolloutBackendOptions RolloutBackendOptions::from(const Args& args) {
  RolloutBackendOptions o;
  o.vllm_flags = args.vllm_passthrough();
  bool vllm = !o.vllm_flags.empty();
  std::string chosen_by = vllm ? o.vllm_flags.front().name : "";
  for (const char* key : {"rollout_external_engine_addrs", "vllm_router_ip", "vllm_config"}) {
    if (args.is_set(key)) {
      vllm = true;
      chosen_by = "--" + std::string(key);
      std::replace(chosen_by.begin(), chosen_by.end(), '_', '-');
    }
  }
  if (args.is_set("rollout_backend")) {
    vllm = args.get_string("rollout_backend") == "vllm";
    chosen_by = "--rollout-backend vllm";
  }
  o.kind = vllm ? RolloutBackendKind::kVllm : RolloutBackendKind::kNative;
  if (vllm && !o.vllm_flags.empty() && chosen_by == o.vllm_flags.front().name)
    o.vllm_chosen_by_flag = chosen_by;
  if (vllm && !launch::gives_engines(launch::EnginePlanOptions::from(args))) {
    throw UsageError(
        "the vLLM backend (chosen by " + chosen_by + ") has no engine to start or use: give " +
        launch::kEngineFlagsHint +
        (o.vllm_chosen_by_flag.empty() ? std::string() : "; " + embedded_engine_hint()));
  }
  if (o.kind == RolloutBackendKind::kNative && !core::flag_on(args, "colocate") &&
      (args.is_set("rollout_num_gpus") || AsyncOptions::from(args).on())) {
    o.engine_replicas = args.get_optional_int("rollout_num_gpus").value_or(1);
  }
  return o;
}

}  // namespace vime::loop
