#include "vime/loop/rollout_backend.hpp"

#include "vime/error.hpp"
#include "vime/loop/native_backend.hpp"
#include "vime/loop/vllm_backend.hpp"

namespace vime::loop {

std::string rollout_backend_name(const Args& args) {
  if (args.is_set("rollout_backend")) return args.get_string("rollout_backend");
  for (const char* key : {"rollout_external_engine_addrs", "vllm_router_ip", "vllm_config"}) {
    if (args.is_set(key)) return "vllm";
  }
  return args.vllm_passthrough().empty() ? "native" : "vllm";
}

std::unique_ptr<RolloutBackend> make_rollout_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     std::ostream& console) {
  const std::string name = rollout_backend_name(args);
  if (name == "vllm") return make_vllm_backend(args, model, version, console);
  if (!args.vllm_passthrough().empty()) {
    throw UsageError(args.vllm_passthrough().front().name +
                     ": --vllm-* engine flags need the vLLM backend, and --rollout-backend is "
                     "native (drop the flag or use --rollout-backend vllm)");
  }
  return make_native_backend(args, model, tokenizer, version);
}

}  // namespace vime::loop
