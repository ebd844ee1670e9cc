// Wall time since a steady_clock point, in seconds (the perf/*_time metrics and engine stats).
#pragma once

#include <chrono>

namespace vime {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace vime
