// Rank 0's metrics of one rollout step, as slime logs them: the generation's rollout/step line;
// train/step lines for each optimizer step of the actor and for the critic; then the step's
// rollout/step line: the train data's means, the actor's rollout-data means, async version lags,
// the weight update's figures and the perf/ times.
#pragma once

#include <cstdint>
#include <optional>

#include "vime/args.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/rollout_driver.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/phase_timer.hpp"
#include "vime/rollout/rollout_manager.hpp"
#include "vime/train/actor.hpp"

namespace vime::loop {

class StepMetrics {
 public:
  // All must outlive it.
  StepMetrics(const Args& args, const TrainLoopOptions& options, bool async,
              metrics::MetricsLogger& logger, RolloutDriver& driver, RolloutBackend& backend);

  // Rollout `rollout_id` was generated (its step started at `step_start`, steady seconds).
  void generated(int64_t rollout_id, double step_start, const rollout::TrainRollout& rollout);
  // Training starts: the engines have stopped.
  void training_starts();
  // The models trained on `batch` (the actor only when `actor_trained`): the train/step lines, and
  // the --ci-test rollout invariants.
  void trained(const rollout::TrainRollout& rollout, const train::TrainBatch& batch,
               const train::Actor& actor, bool actor_trained, const train::Metrics& critic_metrics);
  // The engines took the new weights.
  void weights_updated();
  // Logs the step's rollout/step line.
  void finish(const metrics::PhaseTimer& timer, const train::TrainBatch& batch);

 private:
  const Args& args_;
  const TrainLoopOptions& options_;
  bool async_;
  metrics::MetricsLogger& logger_;
  RolloutDriver& driver_;
  RolloutBackend& backend_;
  // Overlap and weight-transfer figures where the engines have weights of their own.
  bool perf_of_disaggregation_;

  int64_t rollout_id_ = 0;
  double step_start_ = 0, train_start_ = 0, train_end_ = 0;
  std::optional<int64_t> tokens_at_train_start_;
  Metrics per_rollout_;
  Metrics engine_metrics_;  // the embedded engine's counts over the rollout
};

}  // namespace vime::loop
