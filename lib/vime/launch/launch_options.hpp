// The flags that say which rollout engines and which vllm-router a run starts or uses, read once:
// EnginePlanOptions for plan_engines, RouterOptions for the router, LaunchOptions for EngineFleet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::launch {

// --update-weight-transport: how trained weights reach the engines (vLLM's weight-transfer
// backend).
enum class WeightTransport { kNccl, kDisk };
const char* to_string(WeightTransport transport);  // "nccl", "disk"

struct EnginePlanOptions {
  // --rollout-external-engine-addrs: engines already running (vime starts none).
  std::optional<std::vector<std::string>> external_engine_addrs;
  std::optional<std::string> vllm_config;      // --vllm-config: a YAML engine layout
  std::optional<int64_t> prefill_num_servers;  // prefill/decode disaggregation (not supported)
  std::string hf_checkpoint;                   // the engines' model; "" when unset
  std::string model_name;                      // --model-name: the served name; "" when unset
  int64_t gpus_per_engine = 1;                 // --rollout-num-gpus-per-engine
  std::optional<int64_t> rollout_num_gpus;     // unset: the actor's GPUs under --colocate
  int64_t actor_num_nodes = 1;
  int64_t actor_num_gpus_per_node = 8;
  bool colocate = false;
  bool offload_rollout = false;
  WeightTransport weight_transport = WeightTransport::kNccl;
  bool deterministic_inference = false;    // --vllm-enable-deterministic-inference
  bool return_routed_experts = false;      // --use-rollout-routing-replay
  int64_t seed = 1234;                     // engine i gets seed + i
  std::optional<int64_t> max_context_len;  // --rollout-max-context-len: vLLM's --max-model-len
  // vLLM's --dtype: the trainer's (--bf16, --fp16, else float32), so the engines generate with the
  // precision the trainer scores with (vLLM's auto would take the checkpoint's torch_dtype).
  std::string dtype = "float32";
  std::vector<PassthroughFlag> vllm_flags;  // --vllm-* flags, passed to every engine

  // Engines run with --enable-sleep-mode and sleep while the trainer runs: under --colocate (they
  // share its GPUs) or --offload-rollout.
  bool engines_sleep_while_training() const { return colocate || offload_rollout; }

  static EnginePlanOptions from(const Args& args);
};

struct RouterOptions {
  std::optional<std::string> policy;            // --vllm-router-policy
  std::optional<int64_t> request_timeout_secs;  // --router-request-timeout-secs
  std::vector<PassthroughFlag> router_flags;    // --router-* flags, passed to a launched router
  std::optional<std::string> ip;                // --vllm-router-ip: a running router
  std::optional<int64_t> port;                  // --vllm-router-port

  static RouterOptions from(const Args& args);
};

// What EngineFleet starts: the engines and the router.
struct LaunchOptions {
  EnginePlanOptions engines;
  RouterOptions router;

  static LaunchOptions from(const Args& args);
};

}  // namespace vime::launch
