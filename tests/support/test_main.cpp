// vime_tests' main: Catch2's session, plus the count of skipped cases (support/skip.hpp).
#define CATCH_CONFIG_RUNNER
#include <ATen/Context.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "support/skip.hpp"

namespace vime::test {
namespace {

struct SkipCounts {
  int cases_run = 0;
  std::map<std::string, int> skipped_by_reason;
  bool current_skipped = false;
};

SkipCounts& counts() {
  static SkipCounts c;
  return c;
}

class SkipListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo&) override {
    ++counts().cases_run;
    counts().current_skipped = false;
  }
};
CATCH_REGISTER_LISTENER(SkipListener)

}  // namespace

void record_skip(const std::string& reason) {
  if (counts().current_skipped) return;  // one case, counted once
  counts().current_skipped = true;
  ++counts().skipped_by_reason[reason];
}

bool cuda_present() { return at::hasCUDA(); }

}  // namespace vime::test

int main(int argc, char** argv) {
  const int failed = Catch::Session().run(argc, argv);
  const auto& c = vime::test::counts();
  int skipped = 0;
  // $VIME_SKIP_LOG (scripts/test.sh) collects the counts of every vime_tests process of a run.
  const char* log_path = std::getenv("VIME_SKIP_LOG");
  std::FILE* log = log_path != nullptr ? std::fopen(log_path, "a") : nullptr;
  for (const auto& [reason, n] : c.skipped_by_reason) {
    skipped += n;
    const bool gpu = reason == vime::test::kNoCuda;
    for (std::FILE* out : {stdout, log}) {
      if (out != nullptr)
        std::fprintf(out, "%d %scase%s skipped (%s)\n", n, gpu ? "GPU " : "", n == 1 ? "" : "s",
                     reason.c_str());
    }
  }
  if (log != nullptr) std::fclose(log);
  if (failed == 0 && skipped > 0 && skipped == c.cases_run) return vime::test::kSkipExitCode;
  return failed;
}
