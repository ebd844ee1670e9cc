// The actor's training of one rollout (slime's MegatronTrainRayActor.train): log-probs of the
// actor and the reference model, rewards -> advantages, then the optimizer steps of the rollout,
// each over this rank's micro-batches. Runs on one data-parallel rank of N; gradients meet in the
// GradReducer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/model/model.hpp"
#include "vime/train/grad_reducer.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::train {

// The train data of one rollout, one entry per sample (slime's rollout_data).
struct TrainBatch {
  std::vector<std::vector<int64_t>> tokens;           // prompt + response
  std::vector<int64_t> response_lengths;
  std::vector<std::vector<float>> loss_masks;         // [response_length] each; empty: all ones
  std::vector<double> rewards;                        // raw rewards, one per sample
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

  Optimizer& optimizer() { return *optimizer_; }
  LrScheduler& lr_scheduler() { return *lr_scheduler_; }
  Model& model() { return model_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Model& model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LrScheduler> lr_scheduler_;
  std::vector<Metrics> step_metrics_;
  std::vector<at::Tensor> returns_;
};

}  // namespace vime::train
