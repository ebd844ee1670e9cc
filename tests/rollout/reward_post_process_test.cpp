#include "vime/rollout/reward_post_process.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"

using Catch::Detail::Approx;
using vime::Json;
using vime::rollout::normalize_group_rewards;

namespace {

std::vector<vime::Sample> with_rewards(std::vector<Json> rewards) {
  std::vector<vime::Sample> samples(rewards.size());
  for (size_t i = 0; i < rewards.size(); ++i) samples[i].reward = rewards[i];
  return samples;
}

void check_all(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-6));
}

vime::Args args(std::vector<std::string> flags) { return vime::core::parse_args(flags); }

vime::RewardPostProcessOutput post_process_rewards(const vime::Args& a,
                                                   const std::vector<vime::Sample>& samples) {
  return vime::rollout::post_process_rewards(a, vime::rollout::RewardPostProcessOptions::from(a),
                                             samples);
}

vime::rollout::RewardPostProcessor load_reward_post_processor(const vime::Args& a) {
  return vime::rollout::load_reward_post_processor(
      a, vime::rollout::RewardPostProcessOptions::from(a));
}

}  // namespace

// GRPO normalisation vectors computed from slime's _post_process_rewards.
TEST_CASE("GRPO group normalisation matches slime's vectors", "[rollout]") {
  check_all(normalize_group_rewards({1, 0, 0, 1}, 4, true),
            {0.866024, -0.866024, -0.866024, 0.866024});
  check_all(normalize_group_rewards({1, 1, 1, 0}, 4, true),
            {0.499999, 0.499999, 0.499999, -1.499997});
  check_all(normalize_group_rewards({1, 0, 0, 1}, 4, false), {0.5, -0.5, -0.5, 0.5});
  // Groups are normalised separately; a zero-std group becomes all zeros.
  check_all(normalize_group_rewards({1, 0, 1, 1}, 2, true), {0.707106, -0.707106, 0, 0});
  // A count that does not split into groups is one group.
  check_all(normalize_group_rewards({1, 0, 0}, 2, false), {2.0 / 3, -1.0 / 3, -1.0 / 3});
  check_all(normalize_group_rewards({3}, 1, true), {0});
}

TEST_CASE("post_process_rewards follows --advantage-estimator and the normalisation flags",
          "[rollout]") {
  auto samples = with_rewards({1, 0, 0, 1, 1, 1, 1, 0});
  const std::vector<std::string> base{"--n-samples-per-prompt", "4", "--rollout-batch-size", "2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> flags = base;
    flags.insert(flags.end(), extra.begin(), extra.end());
    return post_process_rewards(args(flags), samples);
  };
  for (std::string estimator : {"grpo", "gspo", "cispo"}) {
    auto out = with({"--advantage-estimator", estimator});
    check_all(out.raw_rewards, {1, 0, 0, 1, 1, 1, 1, 0});
    check_all(out.rewards,
              {0.866024, -0.866024, -0.866024, 0.866024, 0.499999, 0.499999, 0.499999, -1.499997});
  }
  check_all(with({"--advantage-estimator", "reinforce_plus_plus_baseline"}).rewards,
            {0.5, -0.5, -0.5, 0.5, 0.25, 0.25, 0.25, -0.75});
  check_all(with({"--disable-grpo-std-normalization"}).rewards,
            {0.5, -0.5, -0.5, 0.5, 0.25, 0.25, 0.25, -0.75});
  check_all(with({"--disable-rewards-normalization"}).rewards, {1, 0, 0, 1, 1, 1, 1, 0});
  check_all(with({"--advantage-estimator", "ppo"}).rewards, {1, 0, 0, 1, 1, 1, 1, 0});
  check_all(with({"--advantage-estimator", "reinforce_plus_plus"}).rewards,
            {1, 0, 0, 1, 1, 1, 1, 0});
  // Fewer samples than n x rbs (dynamic filtering): the whole batch is one group.
  auto partial = post_process_rewards(args(base), with_rewards({1, 0, 0, 1, 1, 1}));
  double mean = 4.0 / 6;
  CHECK(
      partial.rewards[0] ==
      Approx((1 - mean) / (std::sqrt((4 * (1 - mean) * (1 - mean) + 2 * mean * mean) / 5) + 1e-6)));
  // --reward-key picks the value out of dict rewards.
  auto dicts =
      with_rewards({Json(Json::Object{{"acc", Json(1)}}), Json(Json::Object{{"acc", Json(0)}})});
  auto keyed = post_process_rewards(
      args({"--reward-key", "acc", "--n-samples-per-prompt", "2", "--rollout-batch-size", "1"}),
      dicts);
  check_all(keyed.raw_rewards, {1, 0});
  check_all(keyed.rewards, {0.707106, -0.707106});
}

TEST_CASE("--custom-reward-post-process-path replaces group normalisation", "[rollout]") {
  auto samples = with_rewards({1, 0, 0.5, 1});
  auto builtin = load_reward_post_processor(
      args({"--n-samples-per-prompt", "2", "--rollout-batch-size", "2"}));
  check_all(builtin(samples).rewards, {0.707106, -0.707106, -0.707106, 0.707106});

  const std::string lib = vime::test::plugin_path("rollout_plugins");
  auto custom = load_reward_post_processor(
      args({"--custom-reward-post-process-path", lib + ":relative_to_best"}));
  auto out = custom(samples);
  check_all(out.raw_rewards, {1, 0, 0.5, 1});
  check_all(out.rewards, {0, -1, -0.5, 0});
  auto broken =
      load_reward_post_processor(args({"--custom-reward-post-process-path", lib + ":too_few"}));
  CHECK_THROWS_WITH(broken(samples), Catch::Contains("1 raw rewards and 1 rewards for 4 samples"));
  CHECK_THROWS_AS(
      load_reward_post_processor(args({"--custom-reward-post-process-path", "/none/libx.so"})),
      vime::UsageError);
}
