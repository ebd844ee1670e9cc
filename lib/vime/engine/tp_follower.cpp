#include "vime/engine/tp_follower.hpp"

#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>

#include <chrono>

#include "vime/core/elapsed.hpp"
#include "vime/engine/model_runner.hpp"
#include "vime/error.hpp"

namespace vime::engine {

TpFollower::TpFollower(ModelRunner& runner, dist::ProcessGroup& tp_group)
    : runner_(runner), channel_(tp_group) {
  thread_ = std::thread([this] { follow(); });
}

TpFollower::~TpFollower() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void TpFollower::follow() {
  at::AutoGradMode no_grad(false);  // not InferenceMode: the trainer later trains these tensors
  c10::OptionalDeviceGuard device_guard;
  if (!runner_.device().is_cpu()) device_guard.reset_device(runner_.device());
  try {
    while (auto plan = receive()) {
      if (plan->op == StepPlan::Op::kStop) break;
      if (plan->op != StepPlan::Op::kStep) {
        note(*plan);
        continue;
      }
      if (!wait_resumed()) break;
      runner_.run(*plan);
      ran_step();
    }
  } catch (...) {
    std::lock_guard lock(mu_);
    error_ = std::current_exception();
  }
  std::lock_guard lock(mu_);
  done_ = true;
  changed_.notify_all();
}

// The next plan; nullopt once the follower stops.
std::optional<StepPlan> TpFollower::receive() {
  const auto waiting = std::chrono::steady_clock::now();
  auto plan = channel_.next([&] {
    std::lock_guard lock(mu_);
    return stopping_;
  });
  std::lock_guard lock(mu_);
  plan_wait_seconds_ += seconds_since(waiting);
  return plan;
}

// Whether the shards may be read (false: the follower stops).
bool TpFollower::wait_resumed() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return stopping_ || resumes_ >= parks_seen_; });
  return !stopping_;
}

void TpFollower::ran_step() {
  std::lock_guard lock(mu_);
  steps_ = runner_.times().steps;
  forward_seconds_ = runner_.times().forward_seconds;
  kv_bytes_ = runner_.kv_cache_bytes();
}

// Rank 0 paused or freed its cache (the latter frees this rank's).
void TpFollower::note(const StepPlan& plan) {
  if (plan.op == StepPlan::Op::kRelease) runner_.release();
  std::lock_guard lock(mu_);
  if (plan.op == StepPlan::Op::kPark) parks_seen_ = plan.epoch;
  if (plan.op == StepPlan::Op::kRelease) releases_seen_ = plan.epoch;
  kv_bytes_ = runner_.kv_cache_bytes();
  changed_.notify_all();
}

void TpFollower::wait_for(const int64_t& seen, int64_t wanted) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return seen >= wanted || done_; });
  if (error_) std::rethrow_exception(error_);
  if (seen < wanted)
    throw Error("tensor-parallel engine: TP rank 0's engine stopped while this rank waited for it");
}

void TpFollower::pause() {
  int64_t wanted;
  {
    std::lock_guard lock(mu_);
    wanted = ++pauses_;
  }
  wait_for(parks_seen_, wanted);
}

void TpFollower::resume() {
  {
    std::lock_guard lock(mu_);
    ++resumes_;
  }
  changed_.notify_all();
}

void TpFollower::release_memory() {
  int64_t wanted;
  {
    std::lock_guard lock(mu_);
    wanted = ++releases_;
  }
  wait_for(releases_seen_, wanted);
}

int64_t TpFollower::kv_cache_bytes() const {
  std::lock_guard lock(mu_);
  return kv_bytes_;
}

int64_t TpFollower::steps() const {
  std::lock_guard lock(mu_);
  return steps_;
}

double TpFollower::plan_wait_seconds() const {
  std::lock_guard lock(mu_);
  return plan_wait_seconds_;
}

double TpFollower::forward_seconds() const {
  std::lock_guard lock(mu_);
  return forward_seconds_;
}

}  // namespace vime::engine
