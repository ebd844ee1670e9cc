// The engine of a tensor-parallel rank > 0: a thread that runs on this rank's ModelRunner (its
// shards and KV cache) each StepPlan TP rank 0 posts (engine/tp_plan_channel.hpp), and frees the
// cache when it does. It keeps the trainer's rules on its own rank: after rank 0 pauses (kPark),
// it runs no forward until this rank's own resume(), so this rank's optimizer has finished
// changing the shards.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "vime/engine/tp_plan_channel.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime::engine {

class ModelRunner;

class TpFollower {
 public:
  // `runner` must outlive the follower.
  TpFollower(ModelRunner& runner, dist::ProcessGroup& tp_group);
  ~TpFollower();  // stops following (rank 0's engine stops too, or is gone)
  TpFollower(const TpFollower&) = delete;
  TpFollower& operator=(const TpFollower&) = delete;

  // The n-th call returns once rank 0 has paused n times (its last step done here too); throws
  // vime::Error if a step failed on this rank.
  void pause();
  void resume();  // the shards are this rank's to read again
  // The n-th call returns once rank 0 has released its cache n times (this rank's is freed).
  void release_memory();
  int64_t kv_cache_bytes() const;
  int64_t steps() const;
  // Host seconds so far waiting for rank 0's plans, and issuing this rank's forwards.
  double plan_wait_seconds() const;
  double forward_seconds() const;

 private:
  void follow();
  std::optional<StepPlan> receive();
  bool wait_resumed();
  void ran_step();
  void note(const StepPlan& plan);
  void wait_for(const int64_t& seen, int64_t wanted);

  ModelRunner& runner_;
  TpPlanChannel channel_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false, done_ = false;
  std::exception_ptr error_;
  int64_t parks_seen_ = 0, releases_seen_ = 0, pauses_ = 0, resumes_ = 0, releases_ = 0;
  int64_t steps_ = 0, kv_bytes_ = 0;
  double plan_wait_seconds_ = 0, forward_seconds_ = 0;
  std::thread thread_;
};

}  // namespace vime::engine
