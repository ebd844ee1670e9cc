#include "vime/rollout/fully_async_rollout.hpp"

#include <algorithm>
#include <chrono>

#include "vime/error.hpp"
#include "vime/rollout/default_generate.hpp"

namespace vime::rollout {
namespace {

int64_t first_index(const SampleGroup& group) {
  return group.empty() ? -1 : group.front().index.value_or(-1);
}

bool has_aborted(const SampleGroup& group) {
  return std::any_of(group.begin(), group.end(),
                     [](const Sample& s) { return s.status == SampleStatus::kAborted; });
}

}  // namespace

bool is_fully_async_rollout_name(std::string_view name) {
  return name == "slime.rollout.fully_async_rollout.generate_rollout_fully_async" ||
         name == "fully_async";
}

FullyAsyncRollout::FullyAsyncRollout(const RolloutOptions& options, GroupGenerator& generator,
                                     DataSource& data_source)
    : options_(options), generator_(generator), data_source_(data_source) {}

FullyAsyncRollout::~FullyAsyncRollout() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FullyAsyncRollout::set_weight_version(int64_t version) {
  std::lock_guard lock(mutex_);
  version_ = version;
}

// Called with `lock` held; takes prompts while fewer than the in-flight target run and fewer than
// a rollout's worth of finished groups wait (slime's backpressure).
void FullyAsyncRollout::top_up(std::unique_lock<std::mutex>& lock) {
  const int64_t target = options_.batch_size();
  const int64_t in_flight_target = options_.over_sampling_batch_size.value_or(target);
  const SamplingParams params = rollout_sampling_params(options_);
  while (!stopping_ && in_flight_ < in_flight_target &&
         static_cast<int64_t>(finished_.size()) < target) {
    const int64_t version = version_;
    lock.unlock();
    std::vector<SampleGroup> groups;
    {
      std::lock_guard data(data_mutex_);
      groups = data_source_.get_samples(1);
    }
    lock.lock();
    if (groups.empty()) {
      out_of_prompts_ = true;
      changed_.notify_all();
      return;
    }
    for (SampleGroup& group : groups) {
      SampleGroup prompt = group;  // untagged: generated again from scratch when stale
      for (Sample& s : group)
        if (!s.metadata.contains("start_weight_version"))
          s.metadata["start_weight_version"] = version;
      ++in_flight_;
      generator_.submit(std::move(group), params, false, std::nullopt,
                        [this, prompt = std::move(prompt), version](SampleGroup done) mutable {
                          if (has_aborted(done)) {
                            // Back to the buffer, partial tokens and all (slime's worker).
                            std::lock_guard data(data_mutex_);
                            std::vector<SampleGroup> back;
                            back.push_back(std::move(done));
                            data_source_.add_samples(std::move(back));
                          }
                          {
                            std::lock_guard lock(mutex_);
                            if (!done.empty())
                              finished_.push_back({std::move(done), std::move(prompt), version});
                            --in_flight_;  // last: the destructor waits for it
                          }
                          changed_.notify_all();
                        });
    }
  }
}

void FullyAsyncRollout::worker() {
  std::unique_lock lock(mutex_);
  try {
    while (!stopping_) {
      top_up(lock);
      changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
  } catch (const std::exception& e) {
    worker_error_ = e.what();
    changed_.notify_all();
  }
  // Stopping: end what runs and wait for it (the callbacks touch this object).
  lock.unlock();
  generator_.abort();
  lock.lock();
  changed_.wait(lock, [this] { return in_flight_ == 0; });
  generator_.clear_abort();
}

RolloutFnTrainOutput FullyAsyncRollout::generate(int64_t rollout_id) {
  if (!thread_.joinable()) thread_ = std::thread([this] { worker(); });
  const int64_t target = options_.batch_size();
  std::vector<SampleGroup> kept;
  int64_t stale = 0;
  std::vector<SampleGroup> again;
  Metrics metrics;
  {
    std::unique_lock lock(mutex_);
    // Groups that finished while the trainer was away (trained, updated): the overlap.
    metrics["rollout/async/ready_groups_at_start"] = static_cast<double>(finished_.size());
    while (static_cast<int64_t>(kept.size()) < target) {
      changed_.wait(lock, [this] {
        return !finished_.empty() || worker_error_ || (out_of_prompts_ && in_flight_ == 0);
      });
      if (worker_error_) throw Error("fully async rollout: " + *worker_error_);
      if (finished_.empty()) {
        throw Error("the data source ran out of prompts during fully async rollout " +
                    std::to_string(rollout_id));
      }
      Finished f = std::move(finished_.front());
      finished_.pop_front();
      if (options_.max_staleness && version_ - f.start_version > *options_.max_staleness) {
        ++stale;
        again.push_back(std::move(f.prompt));
        continue;
      }
      kept.push_back(std::move(f.group));
    }
    lock.unlock();
    changed_.notify_all();  // room in the queue: the worker tops up
  }
  if (!again.empty()) {
    std::lock_guard data(data_mutex_);
    data_source_.add_samples(std::move(again));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const SampleGroup& a, const SampleGroup& b) {
    return first_index(a) < first_index(b);
  });
  metrics["rollout/async/stale_dropped_groups"] = static_cast<double>(stale);
  {
    std::lock_guard lock(mutex_);
    metrics["rollout/async/queued_groups"] = static_cast<double>(finished_.size());
    metrics["rollout/async/in_flight_groups"] = static_cast<double>(in_flight_);
  }
  return {std::move(kept), std::move(metrics)};
}

}  // namespace vime::rollout
