// Rank 0's part of `vime train`, the controller (slime's driver process with its rollout manager):
// the data source, the rollout backend and manager, the driver that generates in turn or ahead,
// the metrics, and the channel that gives the other ranks their orders. It runs each rollout's
// step (rollout_step.hpp) as their StepRole.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "vime/args.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/loop/async_options.hpp"
#include "vime/loop/rank_channel.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/rollout_driver.hpp"
#include "vime/loop/rollout_step.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/loop/step_metrics.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/loop/trainer.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/rollout/rollout_manager.hpp"
#include "vime/tokenizer.hpp"

namespace vime::loop {

class Controller final : public StepRole {
 public:
  // Starts the data source (at the resumed position) and the rollout backend; every argument must
  // outlive it.
  Controller(const Args& args, const TrainLoopOptions& options, const AsyncOptions& async,
             const RunModelsOptions& models, const dist::ParallelGroups& groups, Trainer& trainer,
             const Tokenizer& tokenizer, metrics::MetricsLogger& logger, std::ostream& console);
  ~Controller() override;

  int64_t start_rollout_id() const { return start_rollout_id_; }
  int64_t num_rollout() const { return num_rollout_; }
  RolloutBackend& backend() { return *backend_; }

  // What runs: "rollouts 0..9 on CPU, Float; generating with embedded engine".
  std::string describe() const;
  // Rollout `rollout_id`, generated now or ahead; its metrics logged.
  rollout::TrainRollout generate(int64_t rollout_id);
  // --debug-rollout-only: the other ranks skip the rollout too.
  void skip_training(int64_t rollout_id);
  // The step's order from `rollout`, sent to the other ranks: the train batch, and whether the
  // step saves. `rollout` must outlive the step.
  RolloutOrder order(int64_t rollout_id, const rollout::TrainRollout& rollout);
  // Logs the step's metrics once the step ran.
  void log_step(const RolloutOrder& order);
  // slime's should_run_periodic_action for --eval-interval.
  bool evaluates_after(int64_t rollout_id) const;
  void eval(int64_t rollout_id);
  // The end of the run: the other ranks check out.
  void finish();

  // StepRole.
  void training_starts() override;
  void trained(const RolloutOrder& order, bool actor_trained,
               const train::Metrics& critic_metrics) override;
  void save(int64_t rollout_id) override;
  void update_weights(int64_t rollout_id) override;

 private:
  const Args& args_;
  const TrainLoopOptions& options_;
  const RunModelsOptions& models_;
  const dist::ParallelGroups& groups_;  // groups_.world: null alone
  Trainer& trainer_;
  metrics::MetricsLogger& logger_;
  std::ostream& console_;
  std::optional<RankChannel> channel_;
  std::unique_ptr<DataSource> data_source_;
  int64_t start_rollout_id_ = 0, num_rollout_ = 0;
  std::optional<int64_t> rollouts_per_epoch_;  // when the epoch length is known
  std::unique_ptr<RolloutBackend> backend_;
  Args rollout_args_;  // what the rollout side sees
  std::unique_ptr<rollout::RolloutManager> manager_;
  std::unique_ptr<RolloutDriver> driver_;
  std::unique_ptr<StepMetrics> metrics_;
  const rollout::TrainRollout* rollout_ = nullptr;  // the step's
};

}  // namespace vime::loop
