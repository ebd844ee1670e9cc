// Where a run's rollouts generate, and how trained weights get there (slime's rollout engines +
// update_weights): the embedded NativeEngine on the trainer's own Model, or vLLM servers (launched
// by vime, external, or behind a router) fed by NCCL broadcast or disk reloads. The train loop sees
// only this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "vime/args.hpp"
#include "vime/engine_client.hpp"
#include "vime/rollout_types.hpp"
#include "vime/tokenizer.hpp"

namespace vime {
class Model;
}
namespace vime::dist {
class ProcessGroup;
}

namespace vime::loop {

class RolloutBackend {
 public:
  virtual ~RolloutBackend() = default;
  virtual EngineClient& engine() = 0;
  // Training is about to run: the engines stop generating and, where they share the trainer's
  // device, give their memory back.
  virtual void before_train() = 0;
  // The engines serve `model`'s weights from now on, tagged `version` (the next rollout id).
  virtual void update_weights(Model& model, int64_t version) = 0;
  virtual std::string describe() const = 0;  // one line for the console
  // What the last update_weights() measured (perf/weight_transfer_time, ...); empty when it
  // moves nothing itself.
  virtual Metrics update_metrics() const { return {}; }
  // What the embedded engine counted over the last rollout (rollout/engine_preemptions, ...),
  // read when training starts; empty for engines outside the process.
  virtual Metrics engine_metrics() const { return {}; }
  // Tokens the engines generated so far, where the backend counts them in-process (the engine
  // replicas); nullopt otherwise.
  virtual std::optional<int64_t> generated_tokens() const { return std::nullopt; }
  // The engines by model, as plugins see them in args.vllm_model_urls
  // (EngineFleet::describe_models); null for the embedded engine.
  virtual Json model_urls() const { return nullptr; }
};

// Starts the backend that RolloutBackendOptions names (vLLM: launches or connects to the engines
// and brings them to `model`'s weights as `version`) on rank 0, the controller; `group` is the
// data-parallel ranks (null: one rank): the embedded backend then drives every rank's engine
// (make_native_backend). `model` and `tokenizer` must outlive it.
std::unique_ptr<RolloutBackend> make_rollout_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     std::ostream& console,
                                                     dist::ProcessGroup* group = nullptr);

// The backend of a data-parallel rank > 0: its embedded engine (rank 0 drives it), or nothing
// under the vLLM backend.
std::unique_ptr<RolloutBackend> make_follower_backend(const Args& args, Model& model,
                                                      const Tokenizer* tokenizer, int64_t version,
                                                      dist::ProcessGroup& group);

// Under tensor parallelism the vLLM backend's weight senders gather the shards (Model::hf_tensors,
// a collective of the tensor-parallel group) on rank 0 alone, so the other ranks of its group
// must gather with it: before each weight update rank 0 announces over its group whether it will
// gather (announce_weight_gather; it returns `gathering`), and those ranks wait for the word and
// gather too (follow_weight_gather). No-ops without tensor parallelism.
bool announce_weight_gather(const Model& model, bool gathering);
void follow_weight_gather(const Model& model);

}  // namespace vime::loop
