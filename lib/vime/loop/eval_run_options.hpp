// The flags `vime eval`'s run reads itself (run_evaluation), once; the models come from
// RunModelsOptions, the datasets and rewards from the rollout side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::loop {

struct EvalRunOptions {
  int64_t seed = 1234;
  std::optional<std::string> output;  // --eval-output: one JSON line per sample

  static EvalRunOptions from(const Args& args);
};

}  // namespace vime::loop
