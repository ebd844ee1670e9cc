#include "vime/metrics/metrics_logger.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "vime/error.hpp"
#include "vime/metrics/console_sink.hpp"
#include "vime/metrics/jsonl_sink.hpp"
#include "vime/metrics/progress_bar.hpp"
#include "vime/metrics/tensorboard_sink.hpp"

namespace vime::metrics {

double system_wall_time() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

MetricsLogger::MetricsLogger(WallClock clock) : clock_(std::move(clock)) {}

void MetricsLogger::add_sink(std::unique_ptr<MetricsSink> sink) {
  std::lock_guard lock(mutex_);
  sinks_.push_back(std::move(sink));
}

size_t MetricsLogger::num_sinks() const {
  std::lock_guard lock(mutex_);
  return sinks_.size();
}

void MetricsLogger::log(std::string_view step_key, int64_t step, const Metrics& metrics) {
  const Metrics* values = &metrics;
  Metrics without_step;
  if (auto it = metrics.find(std::string(step_key)); it != metrics.end()) {
    without_step = metrics;
    without_step.erase(std::string(step_key));
    values = &without_step;
  }
  std::lock_guard lock(mutex_);
  const double wall_time_s = clock_();
  for (auto& sink : sinks_) sink->write(step_key, step, *values, wall_time_s);
}

void MetricsLogger::log(const Metrics& metrics, std::string_view step_key) {
  auto it = metrics.find(std::string(step_key));
  if (it == metrics.end()) {
    throw Error("metrics logged without their step key " + std::string(step_key));
  }
  log(step_key, static_cast<int64_t>(it->second), metrics);
}

std::optional<std::filesystem::path> metrics_jsonl_path(const MetricsLoggerOptions& options) {
  if (options.metrics_jsonl) return std::filesystem::path(*options.metrics_jsonl);
  if (options.save) return std::filesystem::path(*options.save) / "metrics.jsonl";
  return std::nullopt;
}

std::optional<std::filesystem::path> tensorboard_dir(const MetricsLoggerOptions& options,
                                                     const char* env_tensorboard_dir) {
  if (options.tensorboard_dir) return std::filesystem::path(*options.tensorboard_dir);
  if (!options.use_tensorboard) return std::nullopt;
  if (env_tensorboard_dir != nullptr && *env_tensorboard_dir != '\0') {
    return std::filesystem::path(env_tensorboard_dir);
  }
  const auto& project = options.tb_project_name;
  const auto& experiment = options.tb_experiment_name;
  if (project && experiment)
    return std::filesystem::path("tensorboard_log") / *project / *experiment;
  throw UsageError(
      "--use-tensorboard needs a directory: pass --tensorboard-dir DIR, set $TENSORBOARD_DIR, or "
      "pass both --tb-project-name and --tb-experiment-name (tensorboard_log/PROJECT/EXPERIMENT)");
}

std::unique_ptr<MetricsLogger> make_metrics_logger(const Args& args, std::ostream* console,
                                                   WallClock clock) {
  const MetricsLoggerOptions options = MetricsLoggerOptions::from(args);
  auto jsonl = metrics_jsonl_path(options);
  auto tensorboard = tensorboard_dir(options, std::getenv("TENSORBOARD_DIR"));
  const double start_s = clock();
  auto logger = std::make_unique<MetricsLogger>(std::move(clock));
  if (console != nullptr) {
    const bool is_tty = console == &std::cout && stdout_is_tty();
    logger->add_sink(std::make_unique<ConsoleSink>(*console, is_tty, options.log_interval));
  }
  if (jsonl) {
    logger->add_sink(std::make_unique<JsonlSink>(*jsonl));
    if (console != nullptr) *console << "Appending metrics to " << jsonl->string() << ".\n";
  }
  if (tensorboard) {
    auto sink = std::make_unique<TensorBoardSink>(*tensorboard, start_s);
    if (console != nullptr)
      *console << "Saving tensorboard log to " << sink->path().string() << ".\n";
    logger->add_sink(std::move(sink));
  }
  return logger;
}

}  // namespace vime::metrics
