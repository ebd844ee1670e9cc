#include "vime/launch/server_info.hpp"

#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/json.hpp"

namespace vime::launch {
namespace {

constexpr double kTimeoutS = 30;

const Json* path(const Json& doc, std::initializer_list<const char*> keys) {
  const Json* node = &doc;
  for (const char* key : keys) {
    if (!node->is_object()) return nullptr;
    node = node->find(key);
    if (node == nullptr) return nullptr;
  }
  return node;
}

}  // namespace

void check_external_engine(const std::string& url, const EngineExpectations& expected) {
  const std::string what = "external engine " + url;
  const http::Response response =
      http::fetch(http::Request::get(url + "/server_info?config_format=json", kTimeoutS)
                      .bearer(expected.api_key));
  if (response.status == 404) {
    throw Error(what +
                " has no /server_info: vime needs vLLM's dev-mode routes (weight transfer, pause, "
                "sleep); start the server with VLLM_SERVER_DEV_MODE=1");
  }
  if (!response.ok()) throw Error(what + ": GET /server_info: " + response.describe());
  Json info;
  try {
    info = Json::parse(response.body, url + "/server_info");
  } catch (const Error&) {
    return;  // not JSON: an older server's text dump; nothing to check
  }
  // Older servers send vllm_config as one string: nothing to check then.
  const Json* config = path(info, {"vllm_config"});
  if (config == nullptr || !config->is_object()) return;
  if (const Json* dp = path(*config, {"parallel_config", "data_parallel_size"});
      dp != nullptr && dp->is_int() && dp->as_int() > 1) {
    throw Error(what + " runs data parallelism " + std::to_string(dp->as_int()) +
                " (--data-parallel-size): vime drives one vLLM server per engine; start one "
                "server per GPU group and list each in --rollout-external-engine-addrs");
  }
  if (const Json* backend = path(*config, {"weight_transfer_config", "backend"});
      backend != nullptr && backend->is_string() && !expected.weight_transport.empty() &&
      backend->as_string() != expected.weight_transport) {
    throw Error(what + " was started with --weight-transfer-config backend \"" +
                backend->as_string() + "\" but this run sends weights over \"" +
                expected.weight_transport + "\" (--update-weight-transport); make them agree");
  }
}

}  // namespace vime::launch
