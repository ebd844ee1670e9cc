// When rollouts generate relative to training, and when the engines take the trainer's weights:
// in turn (slime's train.py: generate k, train k, update), or one rollout ahead (train_async.py:
// rollout k+1 generates on a background thread while k trains; weights go to the engines every
// --update-weights-interval rollouts, after the rollout in flight has finished, so no rollout
// mixes two versions), or continuously (--fully-async: the rollout manager's background worker
// generates throughout; weights go to the engines without waiting, requests in flight are held
// and resumed on the new weights). The train loop asks it for each rollout and tells it when
// training ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "vime/loop/async_options.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/rollout/rollout_manager.hpp"

namespace vime::loop {

class RolloutDriver {
 public:
  // `manager` and `backend` must outlive the driver; rollouts run up to `num_rollout` - 1.
  RolloutDriver(AsyncOptions options, rollout::RolloutManager& manager, RolloutBackend& backend,
                int64_t num_rollout);
  ~RolloutDriver();  // waits for the rollout in flight (its result is dropped)
  // The engines start on weight version `version` (the first rollout id).
  void set_start_version(int64_t version);
  RolloutDriver(const RolloutDriver&) = delete;
  RolloutDriver& operator=(const RolloutDriver&) = delete;

  // The rollout to train on as `rollout_id` (generated now, or waited for); one step ahead, the
  // generation of rollout_id + 1 starts before this returns. A rollout with failed samples
  // throws vime::Error saying how many and the first error (rollout/failed_samples.hpp).
  rollout::TrainRollout take(int64_t rollout_id);
  // Whether the engines take the weights after training `rollout_id`: every rollout in turn,
  // (rollout_id + 1) % --update-weights-interval == 0 one step ahead.
  bool updates_weights_after(int64_t rollout_id) const;
  // Pushes `model`'s weights as version rollout_id + 1, once the rollout in flight has finished.
  void update_weights(Model& model, int64_t rollout_id);
  // Waits for the rollout in flight (before the data source is saved or an eval runs: slime's
  // rollout manager is one Ray actor, so its save and eval wait for the pending generate too).
  void settle();

  // Training ran from `start` to `end` (steady-clock seconds): the step's
  // perf/rollout_train_overlap_fraction (training time during which a rollout generated) and
  // perf/wait_rollout_time (the trainer blocked on a rollout).
  Metrics step_metrics(double train_start, double train_end);

 private:
  void start(int64_t rollout_id);
  void finish_pending();

  AsyncOptions options_;
  rollout::RolloutManager& manager_;
  RolloutBackend& backend_;
  int64_t num_rollout_;
  std::optional<int64_t> pending_id_;
  std::future<rollout::TrainRollout> pending_;
  std::optional<std::pair<int64_t, rollout::TrainRollout>> ready_;  // finished, not yet taken
  // Generation intervals (steady seconds; end < 0 while running), trimmed to the current step.
  struct Interval {
    double start;
    std::shared_ptr<std::atomic<double>> end;  // < 0 while generating
  };
  std::vector<Interval> generating_;
  double waited_s_ = 0;
};

}  // namespace vime::loop
