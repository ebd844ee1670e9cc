// What a rollout-function plugin (--rollout-function-path, --eval-function-path) gets besides the
// rollout id and the data source: the run's args, the engine, the tokenizer, and vime's default
// generate + sample hooks + reward on a group, so a plugin can reshape the rollout (best-of-n,
// rejection sampling, curricula) without re-implementing generation.
#pragma once

#include <functional>
#include <optional>

#include "vime/rollout_types.hpp"
#include "vime/sampling_params.hpp"

namespace vime {

class Args;
class EngineClient;
class Tokenizer;

struct RolloutContext {
  const Args& args;
  EngineClient& engine;
  const Tokenizer& tokenizer;
  bool evaluation = false;
  // The rollout's default sampling parameters (--rollout-* flags; the eval flags when
  // `evaluation`), with max_new_tokens = the maximum response length.
  SamplingParams sampling_params;
  // Runs vime's default generate (or --custom-generate-function-path), the sample hooks and the
  // reward model on every sample of each group, concurrently under the engine's concurrency cap,
  // and blocks until all are done. A sample that throws comes back FAILED with
  // metadata["error"]; samples keep their group and order.
  std::function<std::vector<SampleGroup>(std::vector<SampleGroup> groups,
                                         const SamplingParams& sampling_params)>
      generate_groups;
};

}  // namespace vime
