#include "vime/metrics/pass_at_k.hpp"

#include <catch2/catch.hpp>

#include "metrics/metric_goldens.hpp"
#include "vime/error.hpp"

using Catch::Detail::Approx;
using vime::Json;
using vime::metrics::compute_pass_rate;
using vime::metrics::estimate_pass_at_k;

// Vectors computed from slime's compute_pass_rate.
TEST_CASE("pass@k matches slime's vectors", "[metrics]") {
  auto m = compute_pass_rate({1, 0, 0, 0}, 4);
  REQUIRE(m.size() == 3);
  CHECK(m["pass@1"] == Approx(0.25));
  CHECK(m["pass@2"] == Approx(0.5));
  CHECK(m["pass@4"] == Approx(1.0));
  auto m8 = compute_pass_rate({0, 1, 0, 1, 0, 0, 1, 0}, 8);
  REQUIRE(m8.size() == 4);
  CHECK(m8["pass@1"] == Approx(0.375));
  CHECK(m8["pass@2"] == Approx(0.642857).epsilon(1e-6));
  CHECK(m8["pass@4"] == Approx(0.928571).epsilon(1e-6));
  CHECK(m8["pass@8"] == Approx(1.0));
  CHECK(compute_pass_rate({1, 0, 1}, 1).empty());  // n = 1 logs nothing
  CHECK_THROWS_AS(compute_pass_rate({1, 0, 1}, 2), vime::Error);
}

TEST_CASE("pass@k equals the exact 1 - C(n-c,k)/C(n,k) of Python's math.comb", "[metrics]") {
  size_t checked = 0;
  for (const Json& c : vime::test::metric_goldens().at("pass_at_k").as_array()) {
    INFO(c.dump());
    CHECK(estimate_pass_at_k(c.at("n").as_int(), c.at("c").as_int(), c.at("k").as_int()) ==
          Approx(c.at("value").as_double()).margin(1e-12));
    ++checked;
  }
  CHECK(checked > 100);
  for (const Json& c : vime::test::metric_goldens().at("grouped_pass_rate").as_array()) {
    std::vector<double> rewards;
    for (const Json& r : c.at("rewards").as_array()) rewards.push_back(r.as_double());
    auto m = compute_pass_rate(rewards, static_cast<size_t>(c.at("group_size").as_int()));
    const auto& expected = c.at("metrics").as_object();
    REQUIRE(m.size() == expected.size());
    for (const auto& [k, v] : expected) CHECK(m[k] == Approx(v.as_double()).margin(1e-12));
  }
}

TEST_CASE("ragged groups: a k is averaged over the groups large enough for it", "[metrics]") {
  // group 7: 4 samples, 1 correct; group 3: 2 samples, both wrong.
  auto m = compute_pass_rate({1, 0, 0, 0, 0, 0}, 4, {7, 7, 3, 7, 3, 7});
  CHECK(m["pass@1"] == Approx((0.25 + 0.0) / 2));
  CHECK(m["pass@2"] == Approx((0.5 + 0.0) / 2));
  CHECK(m["pass@4"] == Approx(1.0));  // only group 7 has 4 samples
  auto small = compute_pass_rate({1, 0}, 4, {1, 2});
  CHECK(small.size() == 1);  // no group reaches k = 2 or 4
  CHECK_THROWS_AS(compute_pass_rate({1, 0}, 4, {1}), vime::Error);
}
