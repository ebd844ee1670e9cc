// Metrics on the console: one line per log call, "rollout/step 3 | rollout/raw_reward 0.5 | ...",
// values with 6 significant digits (slime prints its log dicts the same way, one per step). On a
// terminal each line first erases the line it starts on, so it replaces a progress bar being
// drawn there instead of running on after it (the bar redraws below on its next update).
// With a log interval N > 1, only every Nth step of a step key prints (as Megatron's
// --log-interval), save eval/step lines, which are few and what a run is watched for.
#pragma once

#include <cstdint>
#include <ostream>

#include "vime/metrics/metrics_sink.hpp"

namespace vime::metrics {

class ConsoleSink : public MetricsSink {
 public:
  explicit ConsoleSink(std::ostream& out, bool is_tty = false, int64_t log_interval = 1)
      : out_(out), is_tty_(is_tty), log_interval_(log_interval) {}
  void write(std::string_view step_key, int64_t step, const Metrics& metrics,
             double wall_time_s) override;

 private:
  std::ostream& out_;
  bool is_tty_;
  int64_t log_interval_;
};

}  // namespace vime::metrics
