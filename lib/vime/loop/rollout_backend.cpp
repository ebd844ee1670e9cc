#include "vime/loop/rollout_backend.hpp"

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/loop/native_backend.hpp"
#include "vime/loop/replica_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/vllm_backend.hpp"

namespace vime::loop {

namespace {

// A data-parallel rank > 0 under the vLLM backend: rank 0 alone drives the engines and sends them
// weights; the other ranks only train.
class NoEngineBackend final : public RolloutBackend {
 public:
  EngineClient& engine() override {
    throw Error("this rank does not generate: rank 0 drives the vLLM engines");
  }
  void before_train() override {}
  void update_weights(Model&, int64_t) override {}
  std::string describe() const override { return "no engine on this rank"; }
};

}  // namespace

std::unique_ptr<RolloutBackend> make_follower_backend(const Args& args, Model& model,
                                                      const Tokenizer* tokenizer, int64_t version,
                                                      dist::ProcessGroup& group) {
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kVllm)
    return std::make_unique<NoEngineBackend>();
  return make_native_backend(args, model, tokenizer, version, &group);
}

std::unique_ptr<RolloutBackend> make_rollout_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     std::ostream& console,
                                                     dist::ProcessGroup* group) {
  const auto options = RolloutBackendOptions::from(args);
  if (options.kind == RolloutBackendKind::kVllm)
    return make_vllm_backend(args, model, version, console);
  if (!options.vllm_flags.empty()) {
    throw UsageError(options.vllm_flags.front().name +
                     ": --vllm-* engine flags need the vLLM backend, and --rollout-backend is "
                     "native (drop the flag or use --rollout-backend vllm)");
  }
  if (options.engine_replicas) {
    if (group != nullptr && group->size() > 1) {
      throw UsageError(
          "--rollout-num-gpus without --colocate (or --async) with several trainer ranks is not "
          "supported yet: vime places embedded engine replicas for one trainer rank; use "
          "--colocate, one rank, or the vLLM backend");
    }
    return make_replica_backend(args, model, tokenizer, version, *options.engine_replicas, console);
  }
  return make_native_backend(args, model, tokenizer, version, group);
}

}  // namespace vime::loop
