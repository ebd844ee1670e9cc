#include "vime/loop/vllm_backend.hpp"

#include "vime/error.hpp"

namespace vime::loop {

std::unique_ptr<RolloutBackend> make_vllm_backend(const Args&, Model&, int64_t, std::ostream&) {
  throw UsageError("--rollout-backend vllm: the vLLM rollout backend is being assembled in this "
                   "build; use the embedded engine (drop the vLLM flags)");
}

}  // namespace vime::loop
