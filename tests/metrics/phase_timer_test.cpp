// PhaseTimer with a fake clock: slime's perf/{name}_time keys, accumulation, scopes and misuse.
#include "vime/metrics/phase_timer.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>

#include "vime/error.hpp"

using vime::metrics::PhaseTimer;

TEST_CASE("phases accumulate into slime's perf/{name}_time keys", "[metrics_log]") {
  auto now = std::make_shared<double>(0);
  PhaseTimer timer([now] { return *now; });
  timer.start("train");
  *now += 2.5;
  timer.end("train");
  {
    auto scope = timer.scope("update_weights");
    *now += 0.25;
  }
  timer.start("train");  // a second train phase in the same rollout adds up
  *now += 1;
  timer.end("train");
  timer.add("train_wait", 4);
  timer.start("save_model");  // still running: not reported yet
  CHECK(timer.perf_metrics() == vime::Metrics{{"perf/train_time", 3.5},
                                              {"perf/train_wait_time", 4},
                                              {"perf/update_weights_time", 0.25}});
  timer.reset();
  CHECK(timer.perf_metrics().empty());
  *now += 3;
  timer.end("save_model");  // a phase running across reset() keeps its start
  CHECK(timer.perf_metrics() == vime::Metrics{{"perf/save_model_time", 3}});
}

TEST_CASE("a scope ends its phase when an exception leaves it", "[metrics_log]") {
  auto now = std::make_shared<double>(0);
  PhaseTimer timer([now] { return *now; });
  try {
    auto scope = timer.scope("rollout");
    *now += 7;
    throw std::runtime_error("generation failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(timer.perf_metrics() == vime::Metrics{{"perf/rollout_time", 7}});
  CHECK_NOTHROW(timer.start("rollout"));  // not left running
}

TEST_CASE("timer misuse is an error naming the phase", "[metrics_log]") {
  PhaseTimer timer;
  CHECK_THROWS_WITH(timer.end("train"),
                    Catch::Matchers::Contains("timer train ended without start()"));
  timer.start("train");
  CHECK_THROWS_AS(timer.start("train"), vime::Error);
}
