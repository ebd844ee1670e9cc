// TensorBoard's Event protobuf (tensorflow/core/util/event.proto, framework/summary.proto),
// hand-encoded for the few fields scalars need:
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; oneof value { float simple_value = 2; ... } }
// Encoded as proto3 serializers do: fields in number order, a zero wall_time or step left out.
#pragma once

#include <cstdint>
#include <string>

#include "vime/rollout_types.hpp"

namespace vime::metrics {

inline constexpr const char* kEventFileVersion = "brain.Event:2";

// The first record of every event file: wall_time and file_version "brain.Event:2".
std::string encode_file_version_event(double wall_time_s);
// One Event carrying a Summary with one simple_value per metric (as float), tags in map order.
std::string encode_scalars_event(double wall_time_s, int64_t step, const Metrics& scalars);

}  // namespace vime::metrics
