// Checks an external engine (--rollout-external-engine-addrs) before the run relies on it, as slime
// does with GET /server_info: that it exposes vLLM's dev-mode routes (weight transfer, pause) and
// runs a layout and weight-transfer backend vime can drive.
#pragma once

#include <string>

namespace vime::launch {

struct EngineExpectations {
  std::string weight_transport;  // --update-weight-transport: nccl | disk
  std::string api_key;           // --vllm-api-key
};

// GET <url>/server_info?config_format=json. Throws vime::Error naming the engine and what to change
// when it answers 404 (no VLLM_SERVER_DEV_MODE=1), runs data parallelism > 1, or was started with
// another --weight-transfer-config backend than the run's transport. Fields the server leaves out
// are not checked.
void check_external_engine(const std::string& url, const EngineExpectations& expected);

}  // namespace vime::launch
