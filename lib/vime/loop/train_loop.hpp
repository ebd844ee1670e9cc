// `vime train`: slime's train.py control flow (spec §0) on one process: the actor (and reference
// model, and PPO's critic) train on rollouts that the embedded engine generates from the very
// parameters being trained, so a weight update is a version bump, not a copy.
//
//   setup: models, tokenizer, data source, engine, rollout manager; resume from --load;
//          eval at rollout 0 when --eval-interval is set (unless --skip-eval-before-train)
//   per rollout id: generate -> (engine paused, KV cache freed) train critic, then actor ->
//          save when periodic -> update weights (version bump, engine resumes) -> eval when
//          periodic
// --debug-rollout-only skips training; --debug-train-only trains on --load-debug-rollout-data.
#pragma once

#include <iosfwd>

#include "vime/args.hpp"

namespace vime::loop {

// Runs the whole job; returns the process exit code. Metrics and progress go to `console`.
int run_training(const Args& args, std::ostream& console);

}  // namespace vime::loop
