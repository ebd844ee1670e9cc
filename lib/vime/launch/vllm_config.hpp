// --vllm-config: a YAML engine layout (slime's --sglang-config, vime's vllm_config.py):
//   vllm:
//     - name: actor                  # served model name
//       model_path: /ckpt            # default --hf-checkpoint
//       update_weights: true         # default: model_path == --hf-checkpoint
//       num_gpus_per_engine: 2       # default --rollout-num-gpus-per-engine
//       server_groups:               # alias: engine_groups
//         - {worker_type: regular, num_gpus: 4, num_gpus_per_engine: 2,
//            overrides: {gpu_memory_utilization: 0.8}}
// worker_type: regular starts engines; placeholder takes GPUs and starts nothing; prefill, decode
// and encoder are not supported yet.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vime/json.hpp"

namespace vime::launch {

struct VllmServerGroup {
  std::string worker_type;  // regular | placeholder
  int num_gpus = 0;
  int num_gpus_per_engine = 1;
  // vLLM flags as written in the file, keyed by their flag name: {"--gpu-memory-utilization", 0.8}
  // (see override_to_flag for how values become argv).
  std::vector<std::pair<std::string, Json>> overrides;
};

struct VllmModel {
  std::string name;
  std::string model_path;
  bool update_weights = true;
  std::vector<VllmServerGroup> groups;
};

// Validates `doc` (the parsed file) and fills defaults; errors name `file` and the key path
// ("vllm[0].server_groups[1].num_gpus").
std::vector<VllmModel> parse_vllm_config(const Json& doc, const std::string& file,
                                         const std::string& hf_checkpoint,
                                         int default_gpus_per_engine);
std::vector<VllmModel> load_vllm_config(const std::filesystem::path& file,
                                        const std::string& hf_checkpoint,
                                        int default_gpus_per_engine);

// An override key (gpu_memory_utilization, --max-num-seqs) -> its vLLM flag ("--max-num-seqs")
// and values (true -> bare switch, false/null -> nothing, lists -> several, objects -> JSON).
// Returns false when the flag is to be left out.
bool override_to_flag(const std::string& key, const Json& value, std::string* flag,
                      std::vector<std::string>* values);

}  // namespace vime::launch
