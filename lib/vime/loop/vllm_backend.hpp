// The vLLM rollout backend: `vllm serve` engines (launched by vime, or external, or behind a
// router) driven over HTTP by VllmEngine, weights sent by NCCL broadcast or disk reloads, engines
// put to sleep around training when colocated, and (--use-fault-tolerance) dead engines restarted.
#pragma once

#include <ostream>

#include "vime/loop/rollout_backend.hpp"

namespace vime::loop {

std::unique_ptr<RolloutBackend> make_vllm_backend(const Args& args, Model& model, int64_t version,
                                                  std::ostream& console);

}  // namespace vime::loop
