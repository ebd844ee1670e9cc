#include "vime/loop/rollout_driver.hpp"

#include <algorithm>
#include <chrono>

#include "vime/rollout/failed_samples.hpp"

namespace vime::loop {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

RolloutDriver::RolloutDriver(AsyncOptions options, rollout::RolloutManager& manager,
                             RolloutBackend& backend, int64_t num_rollout)
    : options_(options), manager_(manager), backend_(backend), num_rollout_(num_rollout) {}

void RolloutDriver::set_start_version(int64_t version) { manager_.set_weight_version(version); }

RolloutDriver::~RolloutDriver() {
  if (!pending_.valid()) return;
  try {
    pending_.get();
  } catch (...) {  // the run is ending with another error already
  }
}

void RolloutDriver::start(int64_t rollout_id) {
  auto end = std::make_shared<std::atomic<double>>(-1.0);
  generating_.push_back({now_s(), end});
  pending_id_ = rollout_id;
  pending_ = std::async(std::launch::async, [this, rollout_id, end] {
    struct MarkEnd {
      std::atomic<double>& end;
      ~MarkEnd() { end.store(now_s()); }
    } mark{*end};
    return manager_.generate(rollout_id);
  });
}

void RolloutDriver::finish_pending() {
  if (!pending_id_) return;
  const double t0 = now_s();
  const int64_t id = *pending_id_;
  pending_id_.reset();
  auto rollout = pending_.get();
  waited_s_ += now_s() - t0;
  ready_.emplace(id, std::move(rollout));
}

rollout::TrainRollout RolloutDriver::take(int64_t rollout_id) {
  if (options_.mode == AsyncMode::kFully) {
    // The worker generates all along: one open interval from the first rollout on.
    if (generating_.empty())
      generating_.push_back({now_s(), std::make_shared<std::atomic<double>>(-1.0)});
    const double t0 = now_s();
    auto out = manager_.generate(rollout_id);
    waited_s_ += now_s() - t0;
    rollout::stop_on_failed_samples(rollout_id, out.samples);
    return out;
  }
  if (pending_id_ == rollout_id) finish_pending();
  std::optional<rollout::TrainRollout> out;
  if (ready_ && ready_->first == rollout_id) {
    out = std::move(ready_->second);
    ready_.reset();
  } else {
    // In turn, or the first rollout of an async run: generated now, the trainer waiting.
    const double t0 = now_s();
    auto end = std::make_shared<std::atomic<double>>(-1.0);
    generating_.push_back({t0, end});
    out = manager_.generate(rollout_id);
    end->store(now_s());
    waited_s_ += now_s() - t0;
  }
  // Before the next rollout starts: a run that lost samples stops here, saying why.
  rollout::stop_on_failed_samples(rollout_id, out->samples);
  if (options_.on() && rollout_id + 1 < num_rollout_ && !pending_id_ && !ready_)
    start(rollout_id + 1);
  return std::move(*out);
}

bool RolloutDriver::updates_weights_after(int64_t rollout_id) const {
  if (!options_.on()) return true;
  return (rollout_id + 1) % options_.update_weights_interval == 0;
}

void RolloutDriver::update_weights(Model& model, int64_t rollout_id) {
  // train_async.py: "sync generate before update weights to prevent update weight in the middle
  // of generation".
  finish_pending();
  backend_.update_weights(model, rollout_id + 1);
  manager_.set_weight_version(rollout_id + 1);
}

void RolloutDriver::settle() { finish_pending(); }

Metrics RolloutDriver::step_metrics(double train_start, double train_end) {
  const double now = now_s();
  double overlap = 0;
  for (const auto& g : generating_) {
    const double end = g.end->load() < 0 ? now : g.end->load();
    overlap += std::max(0.0, std::min(end, train_end) - std::max(g.start, train_start));
  }
  // Keep only what may still overlap a later step.
  std::erase_if(generating_, [&](const Interval& g) {
    const double end = g.end->load();
    return end >= 0 && end <= train_end;
  });
  Metrics m;
  const double train_time = train_end - train_start;
  m["perf/rollout_train_overlap_fraction"] = train_time > 0 ? overlap / train_time : 0.0;
  m["perf/wait_rollout_time"] = waited_s_;
  waited_s_ = 0;
  return m;
}

}  // namespace vime::loop
