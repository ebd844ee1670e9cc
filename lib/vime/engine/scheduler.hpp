// The engine's host side, on the rank that takes requests: the waiting and running requests and
// the paged KV cache's blocks (BlockManager: prefix sharing, copy-on-write). schedule() plans one
// step the way vLLM's v1 scheduler does: running requests first (decode rows, the next chunk of an
// unfinished prefill), the newest preempted when the blocks run out, then waiting requests while
// the step's token budget (max_prefill_tokens) and the batch (max_running_requests) allow, each
// starting after the longest cached prefix of its prompt (chunked prefill; a request that returns
// its routed experts skips the prefix cache, as their routing is not cached). postprocess() takes
// the sampled tokens back: stop checks, streaming callbacks, finished requests. Not thread-safe:
// the engine's thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "vime/engine/block_manager.hpp"
#include "vime/engine/engine_request.hpp"
#include "vime/engine/kv_cache_budget.hpp"
#include "vime/engine/native_engine_options.hpp"
#include "vime/engine/sampler.hpp"
#include "vime/engine/step_plan.hpp"

namespace vime::engine {

struct SchedulerStats {
  int64_t waiting = 0, running = 0;
  int64_t preempted = 0;             // requests sent back to wait when the blocks ran out
  int64_t prefix_cached_tokens = 0;  // prompt positions found cached at admission
  int64_t kv_blocks_total = 0, kv_blocks_used = 0, kv_block_copies = 0;
};

class Scheduler {
 public:
  Scheduler(const NativeEngineOptions& options, const KvCacheBudget& budget);

  void add(std::unique_ptr<EngineRequest> request);  // waits behind the requests already waiting
  bool has_work() const { return !waiting_.empty() || !running_.empty(); }
  // The next step (empty when nothing can run now).
  StepPlan schedule();
  // After the step's forward: the scheduled positions are cached, each sampled token goes to its
  // request (plan.samples' order), and so do their positions' routed experts (`routing`, when the
  // plan recorded them). Returns the number of requests that finished.
  int64_t postprocess(const StepPlan& plan, SampledTokens& sampled, const std::string& version,
                      const StepRouting& routing = {});
  // A failed step: every running request gets `error` (the waiting ones stay).
  void fail_running(std::exception_ptr error);
  // A step that ran out of device memory: every running request goes back to wait (recomputed
  // later, as a preemption), and from now on at most `most` run together.
  void preempt_all(int64_t most);
  int64_t running() const { return static_cast<int64_t>(running_.size()); }
  void abort_all(const std::string& version);  // every request ends with "abort"
  // The KV cache was freed: every block is free, running requests are prefilled again.
  void release();
  void reset_prefix_cache();  // the weights changed: cached prefixes are stale
  SchedulerStats stats() const;

 private:
  struct Scheduled {
    EngineRequest* request;
    int64_t begin, end;
    bool sampled;  // the step computes its last position: a token is sampled from it
  };
  bool schedule_running(int64_t& budget);
  void admit_waiting(int64_t& budget);
  bool try_schedule(EngineRequest& r, int64_t tokens);  // false: not enough blocks
  void preempt_last();
  void release_blocks(EngineRequest& r);
  void reset_blocks();
  StepPlan make_plan() const;
  void keep_routing(const StepRouting& routing);  // each request's rows of the step's routing
  void mark_computed();
  bool take_token(EngineRequest& r, SampledTokens& sampled, size_t k, const std::string& version);

  int64_t max_running_;  // lowered by preempt_all
  const int64_t max_tokens_;
  const KvCacheBudget budget_;
  std::unique_ptr<BlockManager> blocks_;
  std::deque<std::unique_ptr<EngineRequest>> waiting_;
  std::vector<std::unique_ptr<EngineRequest>> running_;
  std::vector<Scheduled> scheduled_;  // the last schedule()'s, in the plan's order
  std::vector<BlockCopy> copies_;
  int64_t preempted_ = 0, prefix_cached_tokens_ = 0;
};

}  // namespace vime::engine
