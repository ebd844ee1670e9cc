// How rank 0 (the controller: data, rollout, rewards) tells the other data-parallel ranks what to
// do each rollout: the run's range once, then per rollout whether to train, the train batch, and
// whether to save. Messages go through the job's c10d TCPStore, not a collective, so ranks can
// wait for a rollout of any length without a collective timeout; when rank 0 dies its store goes
// with it and the waiting ranks fail instead of hanging.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/dist/process_group.hpp"
#include "vime/train/rollout_tensors.hpp"

namespace vime::loop {

struct RunRange {
  int64_t start_rollout_id = 0;
  int64_t num_rollout = 0;
};

struct RolloutOrder {
  int64_t rollout_id = 0;
  bool train = true;  // false: --debug-rollout-only
  bool save = false;
  train::TrainBatch batch;  // when train
};

// The TrainBatch as bytes (tokens, response lengths, loss masks, rewards, rollout log-probs and
// rollout ids; PPO values are computed on every rank after it arrives) and back. decode throws
// vime::Error on a truncated or foreign payload.
std::string encode_order(const RolloutOrder& order);
RolloutOrder decode_order(const std::string& bytes);

class RankChannel {
 public:
  explicit RankChannel(dist::ProcessGroup& group) : group_(group) {}
  // Rank 0.
  void publish_range(const RunRange& range);
  void publish(const RolloutOrder& order);
  // Other ranks: block until rank 0 publishes.
  RunRange receive_range();
  RolloutOrder receive(int64_t rollout_id);
  // The end of the run, through the store (rank 0's eval may still use the other ranks' engines
  // after their last training, longer than a collective would wait): the other ranks wait for
  // finish() and check out; rank 0 returns once they have (at most a minute), so its store
  // outlives their NCCL watchdogs.
  void finish();
  void wait_finish();

 private:
  std::string wait_and_get(const std::string& key);
  dist::ProcessGroup& group_;
  std::optional<std::string> last_key_;
};

}  // namespace vime::loop
