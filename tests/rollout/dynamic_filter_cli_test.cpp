// `vime train` as a slime user runs it, with filter_hub's built-in filters named as in slime.
#include <catch2/catch.hpp>

#include "support/test_support.hpp"

TEST_CASE("vime train accepts filter_hub's filters by slime's names", "[rollout][cli]") {
  const std::string base = "train --dry-run --rollout-batch-size 2 --num-rollout 1 ";
  for (std::string name :
       {"slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std",
        "check_reward_nonzero_std_with_fallback"}) {
    auto r = vime::test::run_vime(base + "--dynamic-sampling-filter-path " + name);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("libfilter_check_reward_nonzero_std") &&
                             Catch::Contains("(dynamic_filter)"));
  }
  auto other = vime::test::run_vime(base + "--dynamic-sampling-filter-path my.module.fn");
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.output, Catch::Contains("Python function path"));
}
