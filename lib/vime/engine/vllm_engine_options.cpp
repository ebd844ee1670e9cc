#include "vime/engine/vllm_engine_options.hpp"

#include "vime/core/args_lookup.hpp"

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
  o.api_key = core::engine_api_key(args);
  return o;
}

}  // namespace vime::engine
