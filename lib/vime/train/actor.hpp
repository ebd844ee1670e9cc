// The actor's training of one rollout (slime's MegatronTrainRayActor.train): log-probs of the
// actor and the reference model, rewards -> advantages, then the optimizer steps of the rollout,
// each over this rank's micro-batches. Runs on one data-parallel rank of N; gradients meet in the
// GradReducer.
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
#include "vime/train/grad_reducer.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::train {

// The train data of one rollout, one entry per sample (slime's rollout_data).
struct TrainBatch {
  std::vector<std::vector<int64_t>> tokens;  // prompt + response
  std::vector<int64_t> response_lengths;
  std::vector<std::vector<float>> loss_masks;  // [response_length] each; empty: all ones
  std::vector<double> rewards;                 // one per sample
  // True when `rewards` are already group-normalised (the rollout manager's reward post-process);
  // else the actor normalises raw rewards as --advantage-estimator asks.
  bool rewards_post_processed = false;
  std::vector<std::vector<float>> rollout_log_probs;  // optional, [response_length] each
  std::vector<int64_t> rollout_ids;                   // optional: samples of one rollout id
  std::vector<std::vector<float>> values;             // PPO: critic values, [response_length]
  size_t size() const { return tokens.size(); }
};

using Metrics = std::map<std::string, double>;

class Actor {
 public:
  // `ref_model` may be null (no KL to a reference). The actor keeps references to both models.
  Actor(const Args& args, Model& model, Model* ref_model, GradReducer& reducer);
  ~Actor();

  // Trains on one rollout; returns slime-named metrics (train/loss, train/pg_loss, ...), averaged
  // over the rollout's steps, plus train/grad_norm and train/lr of the last step.
  Metrics train(int64_t rollout_id, const TrainBatch& batch);

  // fp32 log-probs of each sample's response tokens under `model`, no grad, in micro-batches of
  // --max-tokens-per-gpu (or --micro-batch-size) samples.
  std::vector<at::Tensor> compute_log_probs(Model& model, const TrainBatch& batch);

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

  Optimizer& optimizer() { return *optimizer_; }
  LrScheduler& lr_scheduler() { return *lr_scheduler_; }
  Model& model() { return model_; }

 private:
  // Null without a timer.
  std::unique_ptr<metrics::PhaseTimer::Scope> scoped_timer(const char* phase);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  Model& model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LrScheduler> lr_scheduler_;
  std::vector<Metrics> step_metrics_;
  Metrics rollout_data_metrics_;
  std::vector<at::Tensor> returns_;
  metrics::PhaseTimer* timer_ = nullptr;
  std::function<void(int64_t, int64_t)> step_callback_;
};

}  // namespace vime::train
