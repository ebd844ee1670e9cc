#include "vime/launch/launch_options.hpp"

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"

namespace vime::launch {
namespace {

using core::flag_on;
using core::flag_set;
using core::int_if_set;
using core::string_if_set;

WeightTransport parse_weight_transport(const std::optional<std::string>& name) {
  if (!name || *name == "nccl") return WeightTransport::kNccl;
  if (*name == "disk") return WeightTransport::kDisk;
  throw UsageError("--update-weight-transport " + *name + ": use nccl or disk");
}

}  // namespace

const char* to_string(WeightTransport transport) {
  return transport == WeightTransport::kDisk ? "disk" : "nccl";
}

EnginePlanOptions EnginePlanOptions::from(const Args& args) {
  EnginePlanOptions o;
  if (flag_set(args, "rollout_external_engine_addrs"))
    o.external_engine_addrs = args.get_string_list("rollout_external_engine_addrs");
  o.vllm_config = string_if_set(args, "vllm_config");
  o.prefill_num_servers = int_if_set(args, "prefill_num_servers");
  o.hf_checkpoint = string_if_set(args, "hf_checkpoint").value_or("");
  o.model_name = string_if_set(args, "model_name").value_or("");
  o.gpus_per_engine = int_if_set(args, "rollout_num_gpus_per_engine").value_or(1);
  o.rollout_num_gpus = int_if_set(args, "rollout_num_gpus");
  o.actor_num_nodes = int_if_set(args, "actor_num_nodes").value_or(1);
  o.actor_num_gpus_per_node = int_if_set(args, "actor_num_gpus_per_node").value_or(8);
  o.colocate = flag_on(args, "colocate");
  o.offload_rollout = flag_on(args, "offload_rollout");
  o.weight_transport = parse_weight_transport(string_if_set(args, "update_weight_transport"));
  o.deterministic_inference = flag_on(args, "vllm_enable_deterministic_inference");
  o.return_routed_experts = flag_on(args, "use_rollout_routing_replay");
  o.seed = int_if_set(args, "seed").value_or(1234);
  o.max_context_len = int_if_set(args, "rollout_max_context_len");
  if (flag_on(args, "bf16")) {
    o.dtype = "bfloat16";
  } else if (flag_on(args, "fp16")) {
    o.dtype = "float16";
  }
  o.vllm_flags = args.vllm_passthrough();
  return o;
}

RouterOptions RouterOptions::from(const Args& args) {
  RouterOptions o;
  o.policy = string_if_set(args, "router_policy");
  o.request_timeout_secs = int_if_set(args, "router_request_timeout_secs");
  o.router_flags = args.router_passthrough();
  o.ip = string_if_set(args, "vllm_router_ip");
  o.port = int_if_set(args, "vllm_router_port");
  return o;
}

LaunchOptions LaunchOptions::from(const Args& args) {
  return {EnginePlanOptions::from(args), RouterOptions::from(args)};
}

}  // namespace vime::launch
