// The rollout engines to start, from the flags (EnginePlanOptions), in slime's layout:
// --rollout-num-gpus split into engines of --rollout-num-gpus-per-engine GPUs (the tensor-parallel
// size), placed after the actor's GPUs (from GPU 0 under --colocate), or the groups of a
// --vllm-config file. Each engine is `vllm serve <hf_ckpt> --host H --port P ...` (env
// VIME_VLLM_COMMAND replaces `vllm serve`, e.g.
// "/path/vime serve") with vime's required vLLM settings and the user's --vllm-* flags.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vime/launch/launch_options.hpp"

namespace vime::launch {

struct EngineSpec {
  std::string name;            // "engine 0", or "<model>/engine 0" under --vllm-config
  std::string model;           // the --vllm-config model name; empty for the default layout
  bool update_weights = true;  // the trainer syncs its weights into this engine
  int rank = 0;                // global engine index (seed offset)
  int tensor_parallel_size = 1;
  std::vector<int> gpus;             // CUDA device indices on this node
  std::vector<std::string> command;  // {"vllm", "serve", <hf_ckpt>}
  std::vector<std::string> flags;    // everything after --host/--port
  std::vector<std::pair<std::string, std::string>> env;

  // The full argv for one start: command, --host host --port port, flags.
  std::vector<std::string> argv(const std::string& host, int port) const;
};

struct EnginePlan {
  std::vector<EngineSpec> engines;         // engines vime starts
  std::vector<std::string> external_urls;  // --rollout-external-engine-addrs, normalized
  // The model rollouts generate with: the first --vllm-config model that takes the trainer's
  // weights (else the first model); "" for the default layout and external engines. The other
  // models' engines serve plugins (judges, teachers) by name.
  std::string rollout_model;
  bool command_from_env = false;  // the engines' command is VIME_VLLM_COMMAND's
};

// Throws vime::Error when the program the engines run (argv[0] of the first engine's command) is
// not there: "cannot start engine 0: 'vllm' is not on PATH ...", naming VIME_VLLM_COMMAND.
void check_engine_command(const EnginePlan& plan);

// What the plan reads from vime's own environment (explicit for tests).
struct PlanEnvironment {
  std::vector<std::string> command = {"vllm", "serve"};  // VIME_VLLM_COMMAND, split on spaces
  bool command_from_env = false;                         // VIME_VLLM_COMMAND gave `command`
  std::optional<std::string> cuda_visible_devices;       // engine GPU i is the i-th entry
  bool nccl_cumem_enable_set = false;  // NCCL_CUMEM_ENABLE is set: leave it as it is
  // The host's GPUs when CUDA_VISIBLE_DEVICES is unset (/dev/nvidia<N> device files); nullopt when
  // none are found (a CPU machine: the plan is not checked against it).
  std::optional<int> host_gpu_count;
  static PlanEnvironment from_process();
};

// Whether the flags give any engine to start or use: --rollout-external-engine-addrs,
// --vllm-config, --rollout-num-gpus > 0 or --colocate (the actor's GPUs). Without one the vLLM
// backend would wait for engines that never come.
bool gives_engines(const EnginePlanOptions& options);
// The flags that give engines, for messages that ask for one.
extern const char* const kEngineFlagsHint;

// Throws UsageError naming the flag or --vllm-config key on a layout vime cannot start.
EnginePlan plan_engines(const EnginePlanOptions& options,
                        const PlanEnvironment& environment = PlanEnvironment::from_process());

}  // namespace vime::launch
