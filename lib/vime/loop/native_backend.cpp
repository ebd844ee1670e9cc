// The embedded backend: the NativeEngine generates with the trainer's Model itself, so a weight
// update is a version bump (the optimizer changed the very tensors the engine reads).
#include "vime/loop/native_backend.hpp"

#include "vime/engine/native_engine.hpp"
#include "vime/loop/run_models.hpp"

namespace vime::loop {
namespace {

class NativeBackend final : public RolloutBackend {
 public:
  NativeBackend(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version)
      : engine_(model, tokenizer, engine_options(args)) {
    engine_.set_weight_version(std::to_string(version));
  }
  EngineClient& engine() override { return engine_; }
  void before_train() override {
    engine_.pause();
    engine_.release_memory();
  }
  void update_weights(Model&, int64_t version) override {
    engine_.set_weight_version(std::to_string(version));
    engine_.resume();
  }
  std::string describe() const override { return "embedded engine"; }

 private:
  engine::NativeEngine engine_;
};

}  // namespace

std::unique_ptr<RolloutBackend> make_native_backend(const Args& args, Model& model,
                                                    const Tokenizer* tokenizer, int64_t version) {
  return std::make_unique<NativeBackend>(args, model, tokenizer, version);
}

}  // namespace vime::loop
