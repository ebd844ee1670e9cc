// The actor's training of one rollout (slime's MegatronTrainRayActor.train): per-sample data on the
// device, log-probs of the reference model and the old policy, compute_advantages_and_returns, the
// rollout-data postprocess hook, then the optimizer steps of the rollout, each over this rank's
// micro-batches through loss_function. Runs on one data-parallel rank of N; gradients meet in the
// RankReducer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/metrics/phase_timer.hpp"
#include "vime/model/model.hpp"
#include "vime/rollout_types.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/optimizer.hpp"
#include "vime/train/rank_reducer.hpp"
#include "vime/train/rollout_tensors.hpp"
#include "vime/train/routing_replay.hpp"
#include "vime/train/train_context.hpp"

namespace vime::train {

using vime::Metrics;  // the public one (vime/rollout_types.hpp): name -> value

class Actor {
 public:
  // `ref_model` may be null (no KL to a reference), or `model` itself when it has LoRA adapters:
  // the reference is then its base (adapters off). The actor keeps references to `args` (its
  // plugins receive them) and to both models.
  Actor(const Args& args, Model& model, Model* ref_model, RankReducer& reducer);
  ~Actor();

  // Trains on one rollout; returns slime-named metrics (train/loss, train/pg_loss, ...), averaged
  // over the rollout's steps, plus train/grad_norm and train/lr of the last step.
  Metrics train(int64_t rollout_id, const TrainBatch& batch);

  // fp32 log-probs of each sample's response tokens under `model`, no grad, in micro-batches of
  // --max-tokens-per-gpu (or --micro-batch-size) samples: of every sample, or of `samples` only
  // (the others stay undefined).
  std::vector<at::Tensor> compute_log_probs(Model& model, const TrainBatch& batch);
  std::vector<at::Tensor> compute_log_probs(Model& model, const TrainBatch& batch,
                                            const std::vector<int64_t>& samples);

  // Per-sample returns of the last train() call (what PPO's critic regresses on).
  const std::vector<at::Tensor>& returns() const { return returns_; }
  // The metrics of each optimizer step of the last train() call (slime logs them per step too).
  const std::vector<Metrics>& step_metrics() const { return step_metrics_; }
  // The per-rollout means of the last train() call's per-token data, under slime's names:
  // rollout/log_probs, rollout/ref_log_probs, rollout/rollout_log_probs, rollout/advantages,
  // rollout/returns (each present when computed), masked sample means averaged over samples.
  const Metrics& rollout_data_metrics() const { return rollout_data_metrics_; }
  // Times log-prob passes and the optimizer steps (perf/log_probs_time, perf/ref_log_probs_time,
  // perf/actor_train_time) when set.
  void set_timer(metrics::PhaseTimer* timer) { timer_ = timer; }
  // Called with (0, steps of this rollout) before the first optimizer step, then after each step
  // with (steps done, steps): progress bars.
  void set_step_callback(std::function<void(int64_t, int64_t)> callback) {
    step_callback_ = std::move(callback);
  }

  // --use-opd --opd-type megatron: the teacher whose log-probs the advantages move toward (kept
  // by reference; null: the teacher log-probs come with the train data).
  void set_teacher_model(Model* teacher) { teacher_model_ = teacher; }

  // --use-routing-replay / --use-rollout-routing-replay: each sample's routing of the last train()
  // call (null without them).
  const RoutingReplay* routing_replay() const { return routing_replay_.get(); }

  Optimizer& optimizer() { return *optimizer_; }
  LrScheduler& lr_scheduler() { return *lr_scheduler_; }
  Model& model() { return model_; }

 private:
  // The steps of train(), in order.
  // Each rank computes the log-probs of the samples it trains on (`owner`, from the plans) and
  // every rank then holds all of them.
  void compute_ref_and_old_log_probs(const TrainBatch& batch, RolloutTensors& data,
                                     const std::vector<StepPlan>& plans);
  void run_rollout_data_postprocess(int64_t rollout_id, RolloutTensors& data);
  void log_rollout_data(const RolloutTensors& data);
  Metrics train_steps(int64_t rollout_id, const TrainBatch& batch, const RolloutTensors& data,
                      const std::vector<StepPlan>& plans);
  // One optimizer step; its loss metrics (train/<name>, summed over ranks) go into `metrics`.
  struct StepOutcome {
    StepResult result;
    double lr = 0;  // the learning rate it stepped with
  };
  StepOutcome train_step(int64_t rollout_id, const TrainBatch& batch, const RolloutTensors& data,
                         const StepPlan& plan, Metrics& metrics,
                         std::vector<at::Tensor>& first_step_log_probs);

  // Null without a timer.
  std::unique_ptr<metrics::PhaseTimer::Scope> scoped_timer(const char* phase);

  TrainContext ctx_;
  Model& model_;
  Model* ref_model_;
  Model* teacher_model_ = nullptr;
  RankReducer& reducer_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LrScheduler> lr_scheduler_;
  RoutingReplayOptions replay_options_;
  std::unique_ptr<RoutingReplay> routing_replay_;
  // Set for the old-policy log-prob pass only: its forwards record (or, from the rollout, replay)
  // the routing.
  RoutingReplay* log_probs_routing_ = nullptr;
  std::vector<Metrics> step_metrics_;
  Metrics rollout_data_metrics_;
  std::vector<at::Tensor> returns_;
  metrics::PhaseTimer* timer_ = nullptr;
  std::function<void(int64_t, int64_t)> step_callback_;
};

}  // namespace vime::train
