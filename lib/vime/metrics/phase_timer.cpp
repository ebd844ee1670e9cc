#include "vime/metrics/phase_timer.hpp"

#include "vime/error.hpp"

namespace vime::metrics {

PhaseTimer::PhaseTimer(MonotonicClock clock) : clock_(std::move(clock)) {}

void PhaseTimer::start(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (!started_at_s_.emplace(name, clock_()).second) {
    throw Error("timer " + name + " started twice without end()");
  }
}

void PhaseTimer::end(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = started_at_s_.find(name);
  if (it == started_at_s_.end()) throw Error("timer " + name + " ended without start()");
  total_s_[name] += clock_() - it->second;
  started_at_s_.erase(it);
}

void PhaseTimer::add(const std::string& name, double seconds) {
  std::lock_guard lock(mutex_);
  total_s_[name] += seconds;
}

PhaseTimer::Scope::Scope(PhaseTimer& timer, std::string name)
    : timer_(timer), name_(std::move(name)) {
  timer_.start(name_);
}

PhaseTimer::Scope::~Scope() {
  try {
    timer_.end(name_);
  } catch (...) {  // reset() does not touch running phases, so end() cannot fail here
  }
}

Metrics PhaseTimer::perf_metrics() const {
  std::lock_guard lock(mutex_);
  Metrics metrics;
  for (const auto& [name, seconds] : total_s_) metrics["perf/" + name + "_time"] = seconds;
  return metrics;
}

void PhaseTimer::reset() {
  std::lock_guard lock(mutex_);
  total_s_.clear();
}

}  // namespace vime::metrics
