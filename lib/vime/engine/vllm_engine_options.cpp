#include "vime/engine/vllm_engine_options.hpp"

namespace vime::engine {

VllmEngineOptions VllmEngineOptions::from(const Args& args) {
  VllmEngineOptions o;
  if (args.is_set("router_policy")) o.policy = args.get_string("router_policy");
  if (args.is_set("vllm_server_concurrency")) {
    o.concurrency_per_worker = args.get_int("vllm_server_concurrency");
  }
  if (args.is_set("router_request_timeout_secs")) {
    o.request_timeout_s = static_cast<double>(args.get_int("router_request_timeout_secs"));
  }
  // The key the engines were started with (vLLM's --api-key, or the one the router sends them).
  for (const auto* flags : {&args.router_passthrough(), &args.vllm_passthrough()}) {
    for (const auto& flag : *flags) {
      if ((flag.name == "--vllm-api-key" || flag.name == "--router-api-key") &&
          !flag.values.empty()) {
        o.api_key = flag.values.front();
      }
    }
  }
  return o;
}

}  // namespace vime::engine
