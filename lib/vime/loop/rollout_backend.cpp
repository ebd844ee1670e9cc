#include "vime/loop/rollout_backend.hpp"

#include "vime/error.hpp"
#include "vime/loop/native_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/vllm_backend.hpp"

namespace vime::loop {

std::unique_ptr<RolloutBackend> make_rollout_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     std::ostream& console) {
  const auto options = RolloutBackendOptions::from(args);
  if (options.kind == RolloutBackendKind::kVllm)
    return make_vllm_backend(args, model, version, console);
  if (!options.vllm_flags.empty()) {
    throw UsageError(options.vllm_flags.front().name +
                     ": --vllm-* engine flags need the vLLM backend, and --rollout-backend is "
                     "native (drop the flag or use --rollout-backend vllm)");
  }
  return make_native_backend(args, model, tokenizer, version);
}

}  // namespace vime::loop
