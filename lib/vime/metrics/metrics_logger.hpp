// The one entry point for metrics (slime's logging_utils.log / TrackingManager): log(step_key,
// step, metrics) fans out to every sink: console, a JSONL file, TensorBoard event files.
// Thread-safe: rollout workers and the trainer may log concurrently; each call reaches every sink
// whole, in the order the calls took the lock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

#include "vime/args.hpp"
#include "vime/metrics/metrics_options.hpp"
#include "vime/metrics/metrics_sink.hpp"
#include "vime/rollout_types.hpp"

namespace vime::metrics {

using WallClock = std::function<double()>;  // seconds since the Unix epoch
double system_wall_time();

class MetricsLogger {
 public:
  explicit MetricsLogger(WallClock clock = system_wall_time);
  void add_sink(std::unique_ptr<MetricsSink> sink);
  size_t num_sinks() const;

  // `step_key` names the x-axis ("rollout/step", "train/step", "eval/step"); a copy of it inside
  // `metrics` is ignored in favour of `step`. Throws vime::Error when a sink cannot write.
  void log(std::string_view step_key, int64_t step, const Metrics& metrics);
  // slime's form, log(args, metrics, step_key): the step is metrics[step_key], which must be
  // there.
  void log(const Metrics& metrics, std::string_view step_key);

 private:
  WallClock clock_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<MetricsSink>> sinks_;
};

// --metrics-jsonl, else {--save}/metrics.jsonl when --save is set, else none.
std::optional<std::filesystem::path> metrics_jsonl_path(const MetricsLoggerOptions& options);
// Where event files go, or none without --use-tensorboard / --tensorboard-dir: --tensorboard-dir,
// else $TENSORBOARD_DIR (`env_tensorboard_dir`), else
// tensorboard_log/{--tb-project-name}/{--tb-experiment-name} (slime's default). Throws
// vime::UsageError when TensorBoard is on and none of them is given.
std::optional<std::filesystem::path> tensorboard_dir(const MetricsLoggerOptions& options,
                                                     const char* env_tensorboard_dir);

// The logger of a run: a console sink on `console` (none when nullptr), the JSONL sink and the
// TensorBoard sink as the flags above ask. Says where each file goes on `console`.
std::unique_ptr<MetricsLogger> make_metrics_logger(const Args& args, std::ostream* console,
                                                   WallClock clock = system_wall_time);

}  // namespace vime::metrics
