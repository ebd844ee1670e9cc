// Metrics on the console: one line per log call, "rollout/step 3 | rollout/raw_reward 0.5 | ...",
// values with 6 significant digits (slime prints its log dicts the same way, one per step).
#pragma once

#include <ostream>

#include "vime/metrics/metrics_sink.hpp"

namespace vime::metrics {

class ConsoleSink : public MetricsSink {
 public:
  explicit ConsoleSink(std::ostream& out) : out_(out) {}
  void write(std::string_view step_key, int64_t step, const Metrics& metrics,
             double wall_time_s) override;

 private:
  std::ostream& out_;
};

}  // namespace vime::metrics
