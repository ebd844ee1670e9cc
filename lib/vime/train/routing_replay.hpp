// slime's routing replay (slime/utils/routing_replay.py, MegatronTrainRayActor.train_actor): the
// experts an MoE model chose for every token of a sample, kept between the forwards of one
// rollout's training so that the policy gradient flows through the routing the old log-probs
// used. --use-routing-replay records the choice in the old-policy log-prob forward and replays it
// in the training forwards; --use-rollout-routing-replay takes it from the rollout engine
// (Sample::rollout_routed_experts) and replays it in both. The reference (and teacher) forwards
// route freely, as slime's "fallthrough" stage.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "vime/args.hpp"
#include "vime/model/model_config.hpp"
#include "vime/model/moe.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/rollout_tensors.hpp"

namespace vime::train {

struct RoutingReplayOptions {
  bool enabled = false;       // --use-routing-replay, or implied by the next
  bool from_rollout = false;  // --use-rollout-routing-replay
  static RoutingReplayOptions from(const Args& args);
};

class RoutingReplay {
 public:
  explicit RoutingReplay(const ModelConfig& config);

  // Forgets every sample's routing; the rollout has `samples` samples.
  void reset(size_t samples);
  // Each sample's routing from the rollout engine: batch.rollout_routed_experts[i] holds
  // [tokens - 1, num_layers, k] expert ids, row-major (slime's and SGLang's layout: every decoder
  // layer, a dense layer's entries ignored; no row for the last token, which the engine never fed
  // back). The last token replays the row before it: its output reaches no log-prob (so do tokens
  // appended after the last generation, when the rows are fewer). Throws
  // vime::Error naming the sample for a missing column or a wrong size, or an id out of range.
  void load_rollout(const TrainBatch& batch);
  // After a forward over the samples `mb` (packed in that order, `lengths[s]` tokens each) under
  // `routing`: keeps each sample's chosen experts.
  void record(const MicroBatch& mb, const std::vector<int64_t>& lengths, const MoeRouting& routing);
  // The per-MoE-layer expert ids [Σ tokens of mb, k] (int64 on `device`) that a MoeRouting
  // replays in a forward over the samples `mb`. Throws vime::Error for a sample without routing.
  std::vector<at::Tensor> replay_of(const MicroBatch& mb, const at::Device& device) const;
  // Sample `sample`'s routing [tokens, MoE layers, k] int32 on the CPU (undefined: none).
  const at::Tensor& sample_routing(int64_t sample) const { return samples_.at(sample); }

 private:
  std::vector<int64_t> moe_layers_;  // the model's MoE layers, in order
  int64_t num_layers_ = 0, topk_ = 0, num_experts_ = 0;
  std::vector<at::Tensor> samples_;
};

}  // namespace vime::train
