#include "vime/rollout/dynamic_filter.hpp"

#include <catch2/catch.hpp>

#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/builtin_plugins.hpp"
#include "vime/plugin/plugin_loader.hpp"

using vime::DynamicFilterOutput;
using vime::Json;
using vime::PluginKind;
using vime::rollout::should_drop_group;

namespace {

std::vector<vime::Sample> group(std::vector<Json> rewards) {
  std::vector<vime::Sample> g(rewards.size());
  for (size_t i = 0; i < rewards.size(); ++i) g[i].reward = rewards[i];
  return g;
}

vime::Args args(std::vector<std::string> flags = {}) { return vime::core::parse_args(flags); }

vime::rollout::DynamicFilter load_dynamic_filter(const vime::Args& a) {
  return vime::rollout::load_dynamic_filter(a, vime::rollout::RolloutOptions::from(a));
}

// The real filter_hub .so, loaded the way --dynamic-sampling-filter-path loads it.
vime::plugin::PluginFunction<PluginKind::kDynamicFilter> builtin(const std::string& name) {
  return vime::plugin::load_plugin<PluginKind::kDynamicFilter>(
      vime::rollout::resolve_dynamic_filter_spec(name), "--dynamic-sampling-filter-path",
      "dynamic_filter");
}

}  // namespace

TEST_CASE("the drop rule of slime's rollout loop", "[rollout]") {
  DynamicFilterOutput keep{true, "", false};
  DynamicFilterOutput drop{false, "zero_std_1.0", false};
  DynamicFilterOutput fallback{false, "zero_std_0.0", true};
  CHECK_FALSE(should_drop_group(keep, 10, 4));
  CHECK(should_drop_group(drop, 10, 4));
  CHECK(should_drop_group(drop, 3, 4));
  CHECK(should_drop_group(fallback, 5, 4));        // enough groups left: drop
  CHECK_FALSE(should_drop_group(fallback, 4, 4));  // dropping would leave too few
  CHECK_FALSE(should_drop_group(fallback, 2, 4));
}

TEST_CASE("drop reasons become rollout/dynamic_filter/drop_{reason}", "[rollout]") {
  vime::rollout::DynamicFilterMetrics m;
  m.on_drop("zero_std_1.0");
  m.on_drop("zero_std_0.0");
  m.on_drop("zero_std_1.0");
  m.on_drop("");  // no reason: not counted
  CHECK(m.metrics() == vime::Metrics{{"rollout/dynamic_filter/drop_zero_std_1.0", 2},
                                     {"rollout/dynamic_filter/drop_zero_std_0.0", 1}});
}

TEST_CASE("filter_hub's check_reward_nonzero_std plugins behave like slime's",
          "[rollout][filter]") {
  auto a = args();
  for (std::string name :
       {"check_reward_nonzero_std",
        "slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std"}) {
    auto filter = builtin(name);
    REQUIRE(filter);
    CHECK(filter.description().find("libfilter_check_reward_nonzero_std.so") != std::string::npos);
    auto kept = filter(a, group({1.0, 0.0, 1.0, 1.0}));
    CHECK(kept.keep);
    CHECK(kept.reason.empty());
    CHECK_FALSE(kept.keep_when_insufficient);
    auto same = filter(a, group({1.0, 1.0, 1.0, 1.0}));
    CHECK_FALSE(same.keep);
    CHECK(same.reason == "zero_std_1.0");
    CHECK(filter(a, group({0, 0})).reason == "zero_std_0");  // Python int reward
    CHECK(filter(a, group({0.26, 0.26})).reason == "zero_std_0.3");
    CHECK(filter(a, group({-1.0, -1.0 + 1e-7})).reason == "zero_std_-1.0");  // std <= 1e-6
    CHECK(filter(a, group({0.0, 2e-6})).keep);
    auto single = filter(a, group({1.0}));  // torch.std of one value is NaN: dropped
    CHECK_FALSE(single.keep);
  }
  auto fallback = builtin("check_reward_nonzero_std_with_fallback");
  auto out = fallback(a, group({0.5, 0.5}));
  CHECK_FALSE(out.keep);
  CHECK(out.keep_when_insufficient);
  CHECK(out.reason == "zero_std_0.5");
  CHECK(fallback(a, group({0.5, 1.5})).keep);

  // --reward-key applies, as get_reward_value does.
  Json r = Json(Json::Object{{"acc", Json(1.0)}, {"len", Json(3)}});
  CHECK(builtin("check_reward_nonzero_std")(args({"--reward-key", "acc"}), group({r, r})).reason ==
        "zero_std_1.0");
}

TEST_CASE("--dynamic-sampling-filter-path loads built-ins and user plugins", "[rollout][filter]") {
  CHECK_FALSE(load_dynamic_filter(args()));
  auto filter = load_dynamic_filter(
      args({"--dynamic-sampling-filter-path", "check_reward_nonzero_std_with_fallback"}));
  REQUIRE(filter);
  CHECK(filter(group({1, 1})).keep_when_insufficient);
  CHECK(vime::rollout::resolve_dynamic_filter_spec("/x/libmine.so:f") == "/x/libmine.so:f");
  CHECK_THROWS_AS(
      load_dynamic_filter(args({"--dynamic-sampling-filter-path", "/nonexistent/libf.so"})),
      vime::UsageError);
}
