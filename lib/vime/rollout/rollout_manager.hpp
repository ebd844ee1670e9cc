// slime's RolloutManager (slime/ray/rollout.py) without the Ray actors: one
// train rollout or eval per call, through the built-in rollout or the --rollout-function-path /
// --eval-function-path plugin, converted into the trainer's TrainData, with slime's metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "vime/args.hpp"
#include "vime/engine_client.hpp"
#include "vime/rollout_types.hpp"
#include "vime/tokenizer.hpp"

namespace vime::rollout {

struct TrainRollout {
  std::vector<Sample> samples;  // flattened groups, in the rollout function's order
  TrainData data;
  Metrics metrics;  // empty when --custom-rollout-log-function-path returned true
};

struct EvalRollout {
  RolloutFnEvalOutput output;
  Metrics metrics;  // empty when --custom-eval-rollout-log-function-path returned true
};

class RolloutManager {
 public:
  // Loads every plugin of the rollout now (rollout/eval functions, generate, sample hooks, reward,
  // filters, post-process, convert, log hooks), so a bad one fails before the first request. The
  // engine, tokenizer and data source must outlive the manager.
  RolloutManager(const Args& args, EngineClient& engine, const Tokenizer& tokenizer,
                 DataSource& data_source);
  ~RolloutManager();
  RolloutManager(const RolloutManager&) = delete;
  RolloutManager& operator=(const RolloutManager&) = delete;

  // --load-debug-rollout-data instead of generating when set; else the rollout, saved with
  // --save-debug-rollout-data. Then reward post-process, TrainData and metrics.
  TrainRollout generate(int64_t rollout_id);
  // Every eval dataset (or --eval-function-path); with --save-debug-rollout-data the samples are
  // saved as rollout "eval_{id}".
  EvalRollout eval(int64_t rollout_id);
  // Ends the requests in flight (from any thread); the rollout in progress then finishes with
  // what it has.
  void abort();
  // The engines serve weight version `version` from now on (the fully async rollout tags groups
  // with it and bounds their staleness by it; nothing else reads it).
  void set_weight_version(int64_t version);
  // Keeps the fully async rollout's background worker off the data source while the caller holds
  // the lock (to save it); an empty lock otherwise.
  std::unique_lock<std::mutex> lock_data_source();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::rollout
