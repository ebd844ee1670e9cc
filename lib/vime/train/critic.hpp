// PPO's critic (slime's critic actor): a transformer trunk with a value head [1, hidden] in place
// of the output layer. Values are read at the position before each response token, with no
// temperature; training minimises the clipped value loss (--value-clip) against the returns the
// actor computed, with the same micro-batches, reducer and optimizer as the actor.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "vime/args.hpp"
#include "vime/model/model.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/loss_batch.hpp"
#include "vime/train/optimizer.hpp"
#include "vime/train/rank_reducer.hpp"
#include "vime/train/train_options.hpp"

namespace vime::train {

class Critic {
 public:
  // Keeps a reference to `args`.
  Critic(const Args& args, Model& trunk, RankReducer& reducer, uint64_t seed = 4321);
  ~Critic();

  // Values of each sample's response tokens, [response_length] fp32 each on the trunk's device, no
  // grad (what TrainBatch::values takes to the actor).
  std::vector<at::Tensor> compute_values(const TrainBatch& batch);
  // The optimizer steps of one rollout on value_loss_function; `old_values` from compute_values
  // before training, `returns` from the actor (Actor::returns()).
  Metrics train(const TrainBatch& batch, const std::vector<at::Tensor>& old_values,
                const std::vector<at::Tensor>& returns);

  // The returns to regress on when the actor does not train this rollout
  // (--num-critic-only-steps): the estimator's over `values`, without the KL term (slime's critic
  // runs with kl_coef = 0).
  std::vector<at::Tensor> returns_without_actor(const TrainBatch& batch,
                                                const std::vector<at::Tensor>& values) const;

  at::Tensor value_head() const { return value_head_; }  // [1, hidden]
  Optimizer& optimizer() { return *optimizer_; }
  LrScheduler& lr_scheduler() { return *lr_scheduler_; }

 private:
  // Each response token's value, [Σ response_lengths] (differentiable).
  at::Tensor response_values_of(const PackedBatch& packed,
                                const std::vector<int64_t>& total_lengths,
                                const std::vector<int64_t>& response_lengths);
  // One optimizer step; adds value_loss and value_clipfrac (summed over ranks) to `totals`.
  StepResult train_step(const TrainBatch& batch, const RolloutTensors& data, const StepPlan& plan,
                        Metrics& totals);

  const Args& args_;
  TrainOptions options_;
  Model& trunk_;
  RankReducer& reducer_;
  at::Tensor value_head_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LrScheduler> lr_scheduler_;
};

}  // namespace vime::train
