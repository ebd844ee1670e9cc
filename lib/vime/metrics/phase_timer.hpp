// Wall time per named phase of a rollout (slime's utils/timer.py): start/end or a scoped guard
// accumulate seconds per name; perf_metrics() turns them into slime's "perf/{name}_time" keys
// and reset() starts the next rollout. Thread-safe (the rollout thread and the trainer both time).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "vime/metrics/progress_bar.hpp"
#include "vime/rollout_types.hpp"

namespace vime::metrics {

class PhaseTimer {
 public:
  explicit PhaseTimer(MonotonicClock clock = steady_seconds);

  // Throws vime::Error when `name` is already running (start) or not running (end).
  void start(const std::string& name);
  void end(const std::string& name);
  void add(const std::string& name, double seconds);

  // Ends the phase when it goes out of scope, exception or not.
  class Scope {
   public:
    Scope(PhaseTimer& timer, std::string name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTimer& timer_;
    std::string name_;
  };
  Scope scope(std::string name) { return Scope(*this, std::move(name)); }

  // {"perf/train_time": 12.5, "perf/update_weights_time": 0.3, ...} of the finished phases.
  Metrics perf_metrics() const;
  // Forgets finished phases (running ones keep running).
  void reset();

 private:
  MonotonicClock clock_;
  mutable std::mutex mutex_;
  std::map<std::string, double> total_s_;
  std::map<std::string, double> started_at_s_;
};

}  // namespace vime::metrics
