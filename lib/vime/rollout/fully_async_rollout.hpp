// slime's fully async rollout (slime/rollout/fully_async_rollout.py, examples/fully_async): one
// background thread keeps --over-sampling-batch-size prompt groups (default --rollout-batch-size)
// generating across rollout boundaries and weight updates; finished groups wait in a queue (no new
// prompt is taken while --rollout-batch-size of them wait); each train rollout takes the first
// --rollout-batch-size finished groups, sorted by index. Groups with an aborted sample go back to
// the data source, as slime's worker does (resumed from their partial tokens under
// --partial-rollout). vime adds a staleness bound: a group whose generation started on weights more
// than --max-staleness versions older than the trainer's is dropped and its prompt generated again
// (rollout/async/stale_dropped_groups).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "vime/rollout/group_generator.hpp"
#include "vime/rollout/rollout_options.hpp"

namespace vime::rollout {

// slime's --rollout-function-path of this rollout (vime also takes "fully_async").
bool is_fully_async_rollout_name(std::string_view name);

class FullyAsyncRollout {
 public:
  // `generator` and `data_source` must outlive it. The worker starts on the first generate().
  FullyAsyncRollout(const RolloutOptions& options, GroupGenerator& generator,
                    DataSource& data_source);
  ~FullyAsyncRollout();  // stops the worker; groups in flight are aborted and dropped
  FullyAsyncRollout(const FullyAsyncRollout&) = delete;
  FullyAsyncRollout& operator=(const FullyAsyncRollout&) = delete;

  // The next --rollout-batch-size finished groups (waiting for them as needed).
  RolloutFnTrainOutput generate(int64_t rollout_id);
  // The engines serve `version` from now on: groups started later are tagged with it, and the
  // staleness bound is measured against it.
  void set_weight_version(int64_t version);
  // Holds the data source for the caller (its save) while the worker is kept off it.
  std::unique_lock<std::mutex> lock_data_source() { return std::unique_lock(data_mutex_); }

 private:
  struct Finished {
    SampleGroup group;
    SampleGroup prompt;  // the group as the data source gave it, to generate again when stale
    int64_t start_version = 0;
  };
  void worker();
  void top_up(std::unique_lock<std::mutex>& lock);

  const RolloutOptions& options_;
  GroupGenerator& generator_;
  DataSource& data_source_;
  std::mutex data_mutex_;  // the data source: the worker's get/add_samples, the caller's save
  std::mutex mutex_;       // everything below
  std::condition_variable changed_;
  std::deque<Finished> finished_;
  int64_t in_flight_ = 0;
  int64_t version_ = 0;
  bool stopping_ = false;
  bool out_of_prompts_ = false;
  std::optional<std::string> worker_error_;
  std::thread thread_;
};

}  // namespace vime::rollout
