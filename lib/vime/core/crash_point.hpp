// Test-only crash points: with VIME_TEST_CRASH_AT=<name>:<n> in the environment, the process
// kills itself with SIGKILL the n-th time it passes crash_point("<name>"), so a crash-consistency
// test (tests/loop/crash_test.cpp) can aim kills at a phase (a rollout sample, an optimizer step,
// each stage of a checkpoint write). Without the variable a crash point costs one load.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>

namespace vime {

namespace crash_point_detail {

struct Target {
  std::string name;  // empty: no crash point armed
  long long hit = 0;
  std::atomic<long long> passed{0};
};

inline Target& target() {
  static Target* t = [] {
    auto* made = new Target;  // never destroyed: worker threads may pass a point at exit
    const char* env = std::getenv("VIME_TEST_CRASH_AT");
    const std::string spec = env != nullptr ? env : "";
    const size_t colon = spec.rfind(':');
    if (colon != std::string::npos && colon > 0) {
      made->name = spec.substr(0, colon);
      made->hit = std::atoll(spec.c_str() + colon + 1);
    }
    return made;
  }();
  return *t;
}

}  // namespace crash_point_detail

inline void crash_point(std::string_view name) {
  auto& t = crash_point_detail::target();
  if (t.name.empty() || t.name != name) return;
  if (t.passed.fetch_add(1) + 1 == t.hit) ::kill(::getpid(), SIGKILL);
}

}  // namespace vime
