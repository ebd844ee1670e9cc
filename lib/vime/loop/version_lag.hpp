// How far behind the trainer the weights that generated a rollout were (async training): a
// sample's version is the oldest of its weight_versions (one per engine call; slime records them
// per sample) and of metadata.start_weight_version (the fully async rollout's tag), its lag the
// rollout id it trains as minus that version.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vime/rollout_types.hpp"
#include "vime/sample.hpp"

namespace vime::loop {

// The oldest numeric weight version of `sample`; nullopt when it has none (or none is a number:
// external engines may tag versions otherwise).
std::optional<int64_t> oldest_weight_version(const Sample& sample);

struct VersionLags {
  Metrics metrics;  // rollout/async/version_lag_{min,mean,max}; empty without versions
  std::optional<int64_t> uniform;  // the lag when every versioned sample has the same one
};

VersionLags version_lags(const std::vector<Sample>& samples, int64_t rollout_id);

}  // namespace vime::loop
