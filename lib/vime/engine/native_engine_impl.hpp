// NativeEngine's private state and the scheduler thread's steps, shared by native_engine.cpp (the
// public API, the loop, the contiguous-cache path) and paged_scheduler.cpp (the paged KV path).
#pragma once

#include <ATen/ATen.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vime/engine/block_manager.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/engine/engine_request.hpp"
#include "vime/engine/kv_cache_budget.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/tp_follower.hpp"
#include "vime/engine/tp_step_plan.hpp"
#include "vime/model/kv_cache.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime::engine {

struct NativeEngine::Impl {
  Impl(Model& m, const Tokenizer* t, NativeEngineOptions o);

  // The paged scheduler's step, and what it calls.
  struct Scheduled {
    EngineRequest* request;
    int64_t begin, end;
  };
  void step_paged(const std::string& version);
  bool schedule_running(std::vector<Scheduled>& scheduled, std::vector<BlockCopy>& copies,
                        int64_t& budget);
  void admit_waiting(std::vector<Scheduled>& scheduled, std::vector<BlockCopy>& copies,
                     int64_t& budget);
  bool schedule(EngineRequest& r, int64_t tokens, std::vector<Scheduled>& scheduled,
                std::vector<BlockCopy>& copies);
  void preempt_last();
  void release_blocks(EngineRequest& r);
  void reset_blocks();
  void drop_finished();
  // prompt_logprobs: the queued requests whose prompts are still to be scored (taken out of the
  // queue under the lock), then scored without it.
  std::vector<std::unique_ptr<EngineRequest>> take_unscored();
  void score(std::vector<std::unique_ptr<EngineRequest>>& requests);

  std::unique_ptr<EngineRequest> make_request(const GenerateRequest& request);
  void loop();
  void step_contiguous(const std::string& version);
  void sample_rows(const at::Tensor& logits, const std::vector<int64_t>& rows,
                   const std::string& version);
  void compact();
  void fit_memory();
  void finish(EngineRequest& r, const char* reason, const std::string& version);
  void abort_everything();  // under the lock

  Model& model;
  const Tokenizer* tokenizer;
  const NativeEngineOptions options;
  const std::vector<int32_t> eos;
  const int64_t max_context;
  KvCache cache;  // the scheduler thread's (paged_kv off)
  KvCacheBudget budget;
  std::unique_ptr<PagedKvCache> paged;               // the scheduler thread's (paged_kv on)
  std::unique_ptr<BlockManager> blocks;              // the scheduler thread's
  std::unique_ptr<DecodeGraphRunner> decode_runner;  // decode-only steps (CUDA graphs)
  // Tensor parallelism: TP rank 0 posts every step to the other ranks (tp_step_plan.hpp); on the
  // others the follower runs them and there is no scheduler.
  std::unique_ptr<TpPlanChannel> tp_leader;
  int64_t tp_parks = 0, tp_releases = 0;
  std::unique_ptr<TpFollower> tp_follower;

  mutable std::mutex mu;
  std::condition_variable wake;     // the scheduler waits on it
  std::condition_variable changed;  // pause(), abort_all() and release_memory() wait on it
  std::deque<std::unique_ptr<EngineRequest>> queue;
  std::vector<std::unique_ptr<EngineRequest>> running;  // cache row i holds running[i]
  bool stopping = false, paused = false, idle = true, release_pending = false;
  bool prefix_reset_pending = false;
  uint64_t abort_epoch = 0, aborted_epoch = 0;
  std::string weight_version;
  uint64_t submitted = 0;
  EngineStats totals;
  std::thread thread;
};

}  // namespace vime::engine
