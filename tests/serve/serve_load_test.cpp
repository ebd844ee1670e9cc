// [serve_load] The real `vime serve` binary under a CI-sized load-and-abuse run (tools/serve_load
// runs the full 2,000 requests at 64 concurrent): valid completions answer 200, every malformed
// request a 4xx in vLLM's error shape, client hang-ups cost nothing, the server stays healthy and
// stops cleanly, and its RSS growth stays bounded. The growth is per HTTP worker thread that has
// run (~1.5 MiB each: its stack and thread-local parser/tokenizer state), so it levels off at the
// pool's size: measured with the default pool of 528 threads (one per request the rollout keeps in
// flight, 512, plus 16 for control routes) at 64 concurrent: 207 MiB after 300 requests, 717 MiB
// after 2,000, 785 MiB after 6,000. This run (300 + 300 requests at 16) grows ~200 MiB.
#include <catch2/catch.hpp>

#include "load_driver.hpp"
#include "support/test_support.hpp"
#include "vime/core/runtime_info.hpp"

TEST_CASE("serve_load: 300 requests at 16 concurrent with aborts and malformed bodies, 300 fuzzed",
          "[serve_load]") {
  vime::test::TempDir dir;
  auto made = vime::test::run_command(std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " +
                                      dir.path().string() +
                                      " --num-train 16 --num-test 4 --hidden-size 32"
                                      " --num-layers 1 --head-dim 16 --intermediate-size 64");
  REQUIRE(made.exit_code == 0);
  vime::tools::LoadOptions options;
  options.requests = 300;
  options.concurrency = 16;
  options.seed = 7;
  options.fuzz_requests = 300;
  const auto r = vime::tools::run_serve_load(VIME_BIN, (dir.path() / "model").string(), options,
                                             (dir.path() / "serve.log").string());
  INFO(r.summary());
  REQUIRE(r.error.empty());
  CHECK(r.report.sent == 300);
  CHECK(r.report.valid_ok > 50);
  CHECK(r.report.valid_failed == 0);
  CHECK(r.report.bad_ok > 50);
  CHECK(r.report.bad_failed == 0);
  CHECK(r.report.aborted > 10);
  // Each kind of refusal was met: 400 (bad fields, context), 404, 411 (chunked), 413 (size).
  for (int status : {400, 404, 411, 413}) CHECK(r.report.status_counts.count(status) == 1);
  CHECK(r.fuzz.sent == 300);
  CHECK(r.fuzz.bad_failed == 0);  // fuzzed bodies: 200 or a 4xx in vLLM's shape, never a 5xx
  CHECK(r.alive_after);
  CHECK(r.exit_status == 0);
  // With CUDA each worker thread also carries the CUDA runtime's per-thread state: 451 MiB
  // measured on an H100 for this run.
  const long long bound_mib = vime::core::runtime_info().cuda_available ? 640 : 384;
  CHECK(r.rss_after_kib - r.rss_before_kib < bound_mib * 1024);
}
