#include "vime/loop/async_options.hpp"

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"
#include "vime/rollout/fully_async_rollout.hpp"

namespace vime::loop {

AsyncOptions AsyncOptions::from(const Args& args) {
  AsyncOptions o;
  const auto rollout_fn = args.get_optional_string("rollout_function_path");
  if (args.get_bool("fully_async") ||
      (rollout_fn && rollout::is_fully_async_rollout_name(*rollout_fn))) {
    o.mode = AsyncMode::kFully;
  } else if (args.get_bool("async")) {
    o.mode = AsyncMode::kOneStep;
  }
  o.update_weights_interval = args.get_int("update_weights_interval");
  o.max_staleness = args.get_optional_int("max_staleness");
  if (o.update_weights_interval < 1) {
    throw UsageError("--update-weights-interval " + std::to_string(o.update_weights_interval) +
                     ": give a number of rollouts >= 1");
  }
  if (!o.on() && o.update_weights_interval != 1) {
    throw UsageError("--update-weights-interval " + std::to_string(o.update_weights_interval) +
                     " needs --async (slime's train_async.py); the synchronous loop updates the "
                     "engines after every rollout, as train.py does");
  }
  if (o.max_staleness && o.mode != AsyncMode::kFully) {
    throw UsageError(
        "--max-staleness needs --fully-async (the one-step --async loop is never more "
        "than --update-weights-interval versions behind)");
  }
  if (o.max_staleness && *o.max_staleness < 0) {
    throw UsageError("--max-staleness " + std::to_string(*o.max_staleness) +
                     ": give a number of weight versions >= 0");
  }
  if (o.on() && core::flag_on(args, "colocate")) {
    throw UsageError(
        "--async/--fully-async with --colocate: the engines would share the trainer's GPUs and "
        "could not generate while it trains (slime: colocation is not supported for async "
        "training); drop --colocate and give the engines their own GPUs (--rollout-num-gpus)");
  }
  return o;
}

}  // namespace vime::loop
