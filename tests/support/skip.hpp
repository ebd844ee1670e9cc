// Cases that cannot run on this machine report it instead of passing with nothing checked.
// VIME_SKIP("no CUDA") ends the case with a warning and counts it; after the run vime_tests prints
// "N GPU cases skipped (no CUDA)" (and "N cases skipped (REASON)" for other reasons), and exits
// with kSkipExitCode when every case it ran was skipped, which ctest shows as "Skipped"
// (SKIP_RETURN_CODE). Catch2 2.x has no SKIP() of its own.
#pragma once

#include <catch2/catch.hpp>
#include <string>

namespace vime::test {

constexpr int kSkipExitCode = 77;
constexpr const char* kNoCuda = "no CUDA";

// Counts the running case as skipped for `reason`.
void record_skip(const std::string& reason);
// Whether this process sees a CUDA device.
bool cuda_present();

}  // namespace vime::test

#define VIME_SKIP(reason)              \
  do {                                 \
    WARN("skipped: " << (reason));     \
    ::vime::test::record_skip(reason); \
    return;                            \
  } while (false)

// For a case that needs a CUDA device.
#define VIME_SKIP_WITHOUT_CUDA() \
  if (!::vime::test::cuda_present()) VIME_SKIP(::vime::test::kNoCuda)
