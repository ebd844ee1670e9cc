// `vime train`: slime's train.py control flow: the actor (and reference model, and PPO's critic)
// train on rollouts that the embedded engine generates from the very parameters being trained, so
// a weight update is a version bump, not a copy (or on vLLM engines that take the weights).
//
//   setup: ranks, models, tokenizer, data source, engine, rollout manager; resume from --load;
//          eval at rollout 0 when --eval-interval is set (unless --skip-eval-before-train)
//   per rollout id: generate -> (engine paused, KV cache freed) train critic, then actor ->
//          save when periodic -> update weights (version bump, engine resumes) -> eval when
//          periodic
// Rank 0 (controller.hpp) owns the data, the rollout and the metrics; every rank runs the step
// from "train" to "update weights" (rollout_step.hpp).
// --debug-rollout-only skips training; --debug-train-only trains on --load-debug-rollout-data.
#pragma once

#include <iosfwd>

#include "vime/args.hpp"

namespace vime::loop {

// Runs the whole job; returns the process exit code. Metrics and progress go to `console`.
int run_training(const Args& args, std::ostream& console);

}  // namespace vime::loop
