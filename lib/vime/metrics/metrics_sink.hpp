// Where logged metrics go (slime's tracking backends: TensorBoard, W&B, ...). The MetricsLogger
// calls every sink under one lock, so a sink needs no locking of its own.
#pragma once

#include <cstdint>
#include <string_view>

#include "vime/rollout_types.hpp"

namespace vime::metrics {

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  // One log call: `step_key` is "rollout/step", "train/step" or "eval/step"; `metrics` no longer
  // holds it. Throws vime::Error when the record cannot be written.
  virtual void write(std::string_view step_key, int64_t step, const Metrics& metrics,
                     double wall_time_s) = 0;
};

}  // namespace vime::metrics
