// How TP rank 0's engine reaches the other ranks': every StepPlan it runs, and its pauses,
// releases and stop, in order. Plans travel through the group's c10d store rather than a
// collective, so a follower waiting for the next step never holds a collective open on the group
// the trainer uses between rollouts.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "vime/engine/step_plan.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime::engine {

// Plan n of a group's engine under store key "vime/tp_engine/<instance>/<n>" (instance: the how
// many-th engine this process made over the group, the same on every rank).
class TpPlanChannel {
 public:
  explicit TpPlanChannel(dist::ProcessGroup& tp_group);
  // Leader. Thread-safe; plans are numbered in the order posted. One store round trip.
  void post(const StepPlan& plan);
  // Leader: deletes the plans every follower has read (a round trip each), off the step's
  // critical path (while the device runs the step).
  void tidy();
  // Follower: the next plan, waiting in slices; nullopt once `stop()` says so between slices.
  std::optional<StepPlan> next(const std::function<bool()>& stop);

 private:
  std::string key(int64_t n) const;
  dist::ProcessGroup& group_;
  std::string prefix_;
  std::mutex mu_;
  int64_t posted_ = 0, read_ = 0;
  int64_t last_step_ = -1, read_by_all_ = 0, deleted_ = 0;
};

}  // namespace vime::engine
