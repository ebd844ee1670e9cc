#include "vime/metrics/rollout_metrics.hpp"

#include <catch2/catch.hpp>

#include "metrics/metric_goldens.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/python_format.hpp"

using Catch::Detail::Approx;
using vime::Json;
using vime::Sample;
using vime::metrics::compute_rollout_metrics;
using vime::metrics::zero_std_metrics;

namespace {

vime::metrics::SampleMetricsOptions options(std::vector<std::string> flags = {}) {
  return vime::metrics::SampleMetricsOptions::from(vime::core::parse_args(flags));
}

Sample sample(std::optional<int64_t> group, Json reward) {
  Sample s;
  s.group_index = group;
  s.reward = std::move(reward);
  return s;
}

}  // namespace

TEST_CASE("str(round(x, 1)) and repr(x) spelled as CPython does", "[metrics]") {
  const Json& g = vime::test::metric_goldens();
  for (const Json& c : g.at("round1").as_array()) {
    INFO(c.dump());
    CHECK(vime::python_str_round(c.at("x"), 1) == c.at("str").as_string());
  }
  for (const Json& c : g.at("repr").as_array()) {
    INFO(c.dump());
    CHECK(vime::python_float_repr(c.at("x").as_double()) == c.at("repr").as_string());
  }
  CHECK(vime::python_str_round(Json(1), 1) == "1");  // an int stays an int
  CHECK(vime::python_str_round(Json(true), 1) == "1");
}

TEST_CASE("response length statistics and repetition follow numpy and zlib", "[metrics]") {
  const Json& g = vime::test::metric_goldens();
  for (const Json& c : g.at("statistics").as_array()) {
    std::vector<double> values;
    for (const Json& v : c.at("values").as_array()) values.push_back(v.as_double());
    auto s = vime::metrics::compute_statistics(values);
    CHECK(s.mean == Approx(c.at("mean").as_double()));
    CHECK(s.median == c.at("median").as_double());
    CHECK(s.max == c.at("max").as_double());
    CHECK(s.min == c.at("min").as_double());
  }
  for (const Json& c : g.at("texts").as_array()) {
    INFO(c.at("name").as_string());
    const std::string& text = c.at("text").as_string();
    CHECK(vime::metrics::has_repetition(text) == c.at("has_repetition").as_bool());
  }
  // The window is the last 10000 characters, not bytes.
  for (const Json& c : g.at("texts").as_array()) {
    if (c.at("name").as_string() != "unicode_random") continue;
    const std::string& text = c.at("text").as_string();
    // 10050 three-byte characters: the window starts 50 characters in.
    CHECK(vime::metrics::compression_ratio(std::string_view(text).substr(150)) ==
          Approx(c.at("ratio_last_10000").as_double()).epsilon(1e-12));
  }
}

// slime's tests/test_rollout_metrics.py zero-std cases.
TEST_CASE("zero_std counts groups of equal numeric rewards like slime", "[metrics]") {
  auto a = options();
  CHECK(zero_std_metrics(a, {sample(0, nullptr), sample(0, nullptr)}).empty());
  Json payload = Json(Json::Object{{"meta_info", Json::object()}});
  CHECK(zero_std_metrics(a, {sample(0, payload), sample(1, payload)}).empty());
  auto m = zero_std_metrics(a, {sample(10, 1.0), sample(10, 1.0), sample(20, 0.5), sample(20, 0.7),
                                sample(30, payload), sample(40, nullptr)});
  CHECK(m == vime::Metrics{{"zero_std/count_1.0", 1}});
  CHECK(zero_std_metrics(a, {sample(0, nullptr), sample(0, 1.0), sample(0, 1.0)}) ==
        vime::Metrics{{"zero_std/count_1.0", 1}});
  // Integer rewards keep Python's int spelling; 0.25 rounds half to even.
  auto ints = zero_std_metrics(a, {sample(1, 0), sample(1, 0), sample(2, 0), sample(2, 0),
                                   sample(3, 0.25), sample(3, 0.25)});
  CHECK(ints == vime::Metrics{{"zero_std/count_0", 2}, {"zero_std/count_0.2", 1}});
  CHECK(zero_std_metrics(options({"--advantage-estimator", "ppo"}), {sample(1, 0), sample(1, 0)})
            .empty());
  // --reward-key reads the value inside dict rewards.
  Json scored = Json(Json::Object{{"score", Json(-1.0)}});
  CHECK(zero_std_metrics(options({"--reward-key", "score"}),
                         {sample(5, scored), sample(5, scored)}) ==
        vime::Metrics{{"zero_std/count_-1.0", 1}});
}

TEST_CASE("rollout metrics carry slime's names and values", "[metrics]") {
  std::vector<Sample> samples(4);
  for (int i = 0; i < 4; ++i) {
    samples[i].group_index = i / 2;
    samples[i].response_length = 10 * (i + 1);
    samples[i].reward = Json(i < 2 ? 1.0 : static_cast<double>(i));
  }
  samples[1].loss_mask = std::vector<int32_t>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                              0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // effective length 2
  samples[2].status = vime::SampleStatus::kTruncated;
  samples[3].response = std::string(5000, 'a') + std::string(6000, 'b');
  auto m = compute_rollout_metrics(options(), samples);
  CHECK(m.at("rollout/response_len/mean") == Approx((10 + 2 + 30 + 40) / 4.0));
  CHECK(m.at("rollout/response_len/median") == Approx(20.0));
  CHECK(m.at("rollout/response_len/max") == 40);
  CHECK(m.at("rollout/response_len/min") == 2);
  CHECK(m.at("rollout/zero_std/count_1.0") == 1);
  CHECK(m.at("rollout/truncated_ratio") == Approx(0.25));
  CHECK(m.at("rollout/repetition_frac") == Approx(0.25));
  CHECK(m.size() == 7);
  CHECK(compute_rollout_metrics(options(), {}).empty());
}

TEST_CASE("eval and passrate metrics", "[metrics]") {
  vime::EvalDatasetResult r;
  r.rewards = {1, 0, 0, 0, 1, 1, 0, 1};
  r.truncated = {0, 1, 0, 0, 0, 0, 0, 0};
  r.samples.resize(8);
  for (int i = 0; i < 8; ++i) r.samples[i].response_length = i;
  auto m = vime::metrics::eval_dataset_metrics(options({"--log-passrate"}), "aime", r, 4);
  CHECK(m.at("eval/aime") == Approx(0.5));
  CHECK(m.at("eval/aime-truncated_ratio") == Approx(0.125));
  CHECK(m.at("eval/aime/response_len/mean") == Approx(3.5));
  CHECK(m.at("eval/aime-pass@1") == Approx((0.25 + 0.75) / 2));
  CHECK(m.at("eval/aime-pass@4") == Approx(1.0));
  CHECK(vime::metrics::eval_dataset_metrics(options(), "aime", r, 4).count("eval/aime-pass@1") ==
        0);
  auto p = vime::metrics::rollout_pass_rate_metrics(
      options({"--log-passrate", "--n-samples-per-prompt", "4"}), {1, 0, 0, 0});
  CHECK(p.at("passrate/pass@2") == Approx(0.5));
}
