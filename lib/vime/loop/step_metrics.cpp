#include "vime/loop/step_metrics.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "vime/loop/ci_checks.hpp"
#include "vime/loop/train_batch.hpp"
#include "vime/loop/version_lag.hpp"
#include "vime/metrics/metric_steps.hpp"

namespace vime::loop {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// train/step lines: each optimizer step's metrics (after the --ci-test step invariants), then the
// critic's, which slime tags with its role (train/critic-value_loss, ...).
void log_train_steps(metrics::MetricsLogger& logger, const CiCheckOptions& ci, int64_t rollout_id,
                     const std::vector<train::Metrics>& steps, size_t batch_size,
                     const train::Metrics& critic_metrics) {
  const auto num_steps = static_cast<int64_t>(steps.size());
  for (int64_t step_id = 0; step_id < num_steps; ++step_id) {
    check_step_invariants(ci, rollout_id, step_id, steps[step_id]);
    auto m = steps[step_id];
    m["train/global_batch_size"] = static_cast<double>(batch_size) / static_cast<double>(num_steps);
    logger.log("train/step", metrics::compute_train_step(rollout_id, num_steps, step_id), m);
  }
  if (critic_metrics.empty()) return;
  train::Metrics renamed;
  for (const auto& [k, v] : critic_metrics) {
    const auto slash = k.find('/');
    renamed["train/critic-" + (slash == std::string::npos ? k : k.substr(slash + 1))] = v;
  }
  logger.log("train/step",
             metrics::compute_train_step(rollout_id, std::max<int64_t>(num_steps, 1), 0), renamed);
}

// perf/*_time of the phases, perf/step_time and the actor's train tokens/s.
Metrics perf_metrics(const metrics::PhaseTimer& timer, double step_time,
                     const train::TrainBatch& batch) {
  auto perf = timer.perf_metrics();
  perf["perf/step_time"] = step_time;
  double train_tokens = 0;
  for (const auto& t : batch.tokens) train_tokens += static_cast<double>(t.size());
  if (perf.count("perf/actor_train_time") > 0 && perf["perf/actor_train_time"] > 0) {
    perf["perf/actor_train_tok_per_s"] = train_tokens / perf["perf/actor_train_time"];
  }
  return perf;
}

// The mean over optimizer steps of `key` in the actor's step metrics; nullopt when no step has it.
std::optional<double> step_mean(const std::vector<train::Metrics>& steps, const std::string& key) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& step : steps) {
    if (auto it = step.find(key); it != step.end()) {
      sum += it->second;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

}  // namespace

StepMetrics::StepMetrics(const Args& args, const TrainLoopOptions& options, bool async,
                         metrics::MetricsLogger& logger, RolloutDriver& driver,
                         RolloutBackend& backend)
    : args_(args),
      options_(options),
      async_(async),
      logger_(logger),
      driver_(driver),
      backend_(backend),
      perf_of_disaggregation_(async || !backend.update_metrics().empty()) {}

void StepMetrics::generated(int64_t rollout_id, double step_start,
                            const rollout::TrainRollout& rollout) {
  rollout_id_ = rollout_id;
  step_start_ = step_start;
  per_rollout_.clear();
  if (!rollout.metrics.empty())
    logger_.log("rollout/step", metrics::compute_rollout_step(args_, rollout_id), rollout.metrics);
}

void StepMetrics::training_starts() {
  train_start_ = now_s();
  tokens_at_train_start_ = backend_.generated_tokens();
  engine_metrics_ = backend_.engine_metrics();
}

void StepMetrics::trained(const rollout::TrainRollout& rollout, const train::TrainBatch& batch,
                          const train::Actor& actor, bool actor_trained,
                          const train::Metrics& critic_metrics) {
  log_train_steps(logger_, options_.ci, rollout_id_,
                  actor_trained ? actor.step_metrics() : std::vector<train::Metrics>{},
                  batch.size(), critic_metrics);
  per_rollout_ = train_data_metrics(rollout.data);
  if (actor_trained)
    for (const auto& [k, v] : actor.rollout_data_metrics()) per_rollout_[k] = v;
  check_rollout_invariants(options_.ci, rollout_id_, per_rollout_);
  train_end_ = now_s();
  if (!async_) return;
  // Which weights generated what this step trained on, and how far the engine's log-probs were
  // from the trainer's at each lag.
  const auto lags = version_lags(rollout.samples, rollout_id_);
  for (const auto& [k, v] : lags.metrics) per_rollout_[k] = v;
  if (const auto diff = step_mean(actor.step_metrics(), "train/train_rollout_logprob_abs_diff");
      diff && lags.uniform)
    per_rollout_["train/train_rollout_logprob_abs_diff/lag_" + std::to_string(*lags.uniform)] =
        *diff;
}

void StepMetrics::weights_updated() {
  for (const auto& [k, v] : backend_.update_metrics()) per_rollout_[k] = v;
}

void StepMetrics::finish(const metrics::PhaseTimer& timer, const train::TrainBatch& batch) {
  for (const auto& [k, v] : perf_metrics(timer, now_s() - step_start_, batch)) per_rollout_[k] = v;
  for (const auto& [k, v] : engine_metrics_) per_rollout_[k] = v;
  if (perf_of_disaggregation_) {
    for (const auto& [k, v] : driver_.step_metrics(train_start_, train_end_)) per_rollout_[k] = v;
    // How much the engines generated while the trainer trained (0 in turn).
    if (auto tokens = backend_.generated_tokens(); tokens && tokens_at_train_start_)
      per_rollout_["perf/engine_tok_per_s_while_training"] =
          static_cast<double>(*tokens - *tokens_at_train_start_) /
          std::max(train_end_ - train_start_, 1e-9);
  }
  logger_.log("rollout/step", metrics::compute_rollout_step(args_, rollout_id_), per_rollout_);
}

}  // namespace vime::loop
