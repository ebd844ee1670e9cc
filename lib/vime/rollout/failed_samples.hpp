// The samples a train rollout lost (status FAILED: a generate, sample-hook or reward error, see
// group_generator.hpp) in one line: how many of how many, by stage, and the first one's error.
// slime lets such an exception end the rollout and the run; vime finishes the rollout (every
// sample's error lands in --save-debug-rollout-data and rollout/error_cat/*) and then stops the
// run with this line, before any training on a partial batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/sample.hpp"

namespace vime::rollout {

// "253 of 256 samples failed to generate; first error: <text>"; nullopt when none failed.
std::optional<std::string> describe_failed_samples(const std::vector<Sample>& samples);

// Throws vime::Error "rollout <id>: <describe_failed_samples>" when a sample failed.
void stop_on_failed_samples(int64_t rollout_id, const std::vector<Sample>& samples);

}  // namespace vime::rollout
