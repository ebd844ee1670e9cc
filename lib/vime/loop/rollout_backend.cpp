#include "vime/loop/rollout_backend.hpp"

#include <ATen/ATen.h>

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/loop/native_backend.hpp"
#include "vime/loop/replica_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/vllm_backend.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"

namespace vime::loop {

namespace {

// A data-parallel rank > 0 under the vLLM backend: rank 0 alone drives the engines and sends them
// weights; the other ranks only train.
// Under tensor (expert) parallelism the other ranks of rank 0's tensor- (expert-) parallel group
// take part in the gather of every weight update (from the first, which the vLLM backend sends as
// it starts).
class NoEngineBackend final : public RolloutBackend {
 public:
  NoEngineBackend(Model& model, bool gathers) : model_(model), gathers_(gathers) {
    if (gathers_) follow_weight_gather(model_);
  }
  EngineClient& engine() override {
    throw Error("this rank does not generate: rank 0 drives the vLLM engines");
  }
  void before_train() override {}
  void update_weights(Model&, int64_t) override {
    if (gathers_) follow_weight_gather(model_);
  }
  std::string describe() const override { return "no engine on this rank"; }

 private:
  Model& model_;
  bool gathers_;
};

int gather_word(const Model& model, int word) {
  std::vector<at::Tensor> t{
      at::full({1}, word, at::TensorOptions().dtype(at::kInt).device(model.device()))};
  model.gather_group()->broadcast(t, 0);
  return t[0].item<int>();
}

}  // namespace

std::unique_ptr<RolloutBackend> make_follower_backend(const Args& args, Model& model,
                                                      const Tokenizer* tokenizer, int64_t version,
                                                      dist::ProcessGroup& group) {
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kVllm) {
    // The tensor- (or expert-) parallel group of rank 0 is ranks [0, its size).
    const auto* gathering = model.gather_group();
    const bool gathers = gathering != nullptr && group.rank() < gathering->size();
    return std::make_unique<NoEngineBackend>(model, gathers);
  }
  return make_native_backend(args, model, tokenizer, version, &group);
}

std::unique_ptr<RolloutBackend> make_rollout_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     std::ostream& console,
                                                     dist::ProcessGroup* group) {
  const auto options = RolloutBackendOptions::from(args);
  if (options.kind == RolloutBackendKind::kVllm) {
    if (!options.vllm_chosen_by_flag.empty()) {
      console << "vime train: " << options.vllm_chosen_by_flag
              << " selects the vLLM backend (rollouts from `vllm serve` engines); "
              << embedded_engine_hint() << std::endl;
    }
    return make_vllm_backend(args, model, version, console);
  }
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

bool announce_weight_gather(const Model& model, bool gathering) {
  if (model.gather_group() == nullptr) return gathering;
  return gather_word(model, gathering ? 1 : 0) == 1;
}

void follow_weight_gather(const Model& model) {
  if (gather_word(model, 0) == 1) weight_sync::follow_gathered_send(model);
}

}  // namespace vime::loop
