#include "bench/kineto_trace.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <set>

namespace vime::bench {

namespace profiler = torch::autograd::profiler;

void start_kineto_trace(bool cuda) {
  std::set<profiler::ActivityType> activities{profiler::ActivityType::CPU};
  if (cuda) activities.insert(profiler::ActivityType::CUDA);
  const profiler::ProfilerConfig config(profiler::ProfilerState::KINETO, /*shapes=*/true);
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
}

bool save_kineto_trace(const std::string& path) {
  auto result = profiler::disableProfiler();
  try {
    result->save(path);
    return true;
  } catch (const c10::Error&) {  // Debian's CPU LibTorch 1.13 is built without Kineto
    std::fprintf(stderr, "--profile: this LibTorch has no Kineto profiler; no trace written\n");
    return false;
  }
}

}  // namespace vime::bench
