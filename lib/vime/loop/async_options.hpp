// How `vime train` overlaps rollouts with training (slime's train.py vs train_async.py vs
// examples/fully_async), read once from the flags.
#pragma once

#include <cstdint>
#include <optional>

#include "vime/args.hpp"

namespace vime::loop {

enum class AsyncMode {
  kOff,      // train.py: generate, train, update weights, in turn
  kOneStep,  // --async (train_async.py): rollout k+1 generates while rollout k trains
  kFully,    // --fully-async (rollout/fully_async_rollout.hpp): groups generate continuously
};

struct AsyncOptions {
  AsyncMode mode = AsyncMode::kOff;
  int64_t update_weights_interval = 1;   // --update-weights-interval
  std::optional<int64_t> max_staleness;  // --max-staleness (fully async only); unset: no limit

  bool on() const { return mode != AsyncMode::kOff; }

  // Throws UsageError naming the flag: --update-weights-interval other than 1 or --max-staleness
  // without the async mode that reads it, --async with --colocate, an interval or staleness < 0.
  static AsyncOptions from(const Args& args);
};

}  // namespace vime::loop
