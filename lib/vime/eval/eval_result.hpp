// One eval dataset's rollout output as slime hands it to logging: rewards read through
// --eval-reward-key (else --reward-key), truncation flags, and the samples.
#pragma once

#include <vector>

#include "vime/eval/eval_options.hpp"
#include "vime/rollout_types.hpp"

namespace vime::eval {

// Throws vime::Error naming the sample when a reward is missing or is an object without the key.
EvalDatasetResult make_eval_result(const EvalOptions& options, std::vector<Sample> samples);

}  // namespace vime::eval
