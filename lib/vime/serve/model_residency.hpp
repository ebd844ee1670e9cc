// Where a served model's parameters live while `vime serve` sleeps (vLLM's sleep levels): on the
// device (resident), copied to host memory with the device storage freed (level 1), or freed with
// only their shapes kept (level 2). Parameters are re-pointed in place (Tensor::set_), so every
// alias the model and the engine hold sees the change. The caller keeps the engine paused.
#pragma once

#include <memory>

namespace vime {
class Model;
}

namespace vime::serve {

class ModelResidency {
 public:
  enum class State { kResident, kOffloaded, kDiscarded };

  explicit ModelResidency(Model& model);  // `model` must outlive this
  ~ModelResidency();
  ModelResidency(const ModelResidency&) = delete;
  ModelResidency& operator=(const ModelResidency&) = delete;

  State state() const { return state_; }
  // Copies every parameter to host memory and frees its device storage. No-op unless resident.
  void offload();
  // Frees every parameter's storage; the weights must be loaded again after restore().
  void discard();
  // Offloaded: copies the host copies back (bit-identical). Discarded: zero tensors of the old
  // shapes, ready to be loaded into. No-op when resident.
  void restore();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  State state_ = State::kResident;
};

}  // namespace vime::serve
