// The loop's own rules: slime's periodic actions, --ci-test invariants, TrainData -> TrainBatch.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/loop/ci_checks.hpp"
#include "vime/loop/periodic.hpp"
#include "vime/loop/train_batch.hpp"

using vime::loop::should_run_periodic_action;

TEST_CASE("periodic actions follow slime's should_run_periodic_action", "[loop]") {
  // No interval: never, not even at the last rollout.
  CHECK_FALSE(should_run_periodic_action(9, std::nullopt, std::nullopt, 10));
  // Every `interval` rollouts: ids 4, 9, 14 with interval 5.
  std::vector<int64_t> hits;
  for (int64_t id = 0; id < 15; ++id) {
    if (should_run_periodic_action(id, 5, std::nullopt)) hits.push_back(id);
  }
  CHECK(hits == std::vector<int64_t>{4, 9, 14});
  // The last rollout counts only when num_rollout is passed (the save call).
  CHECK(should_run_periodic_action(6, 5, std::nullopt, 7));
  CHECK_FALSE(should_run_periodic_action(6, 5, std::nullopt));
  // Epoch ends count too.
  CHECK(should_run_periodic_action(2, 100, 3));
  CHECK_FALSE(should_run_periodic_action(3, 100, 3));
}

namespace {
vime::loop::CiCheckOptions ci_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{"--ci-test"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return vime::loop::CiCheckOptions::from(vime::core::parse_args(argv));
}
}  // namespace

TEST_CASE("--ci-test asserts slime's invariants", "[loop]") {
  auto args = ci_args();
  // Rollout 0: actor = reference log-probs.
  CHECK_NOTHROW(vime::loop::check_rollout_invariants(
      args, 0, {{"rollout/log_probs", -2.5}, {"rollout/ref_log_probs", -2.5}}));
  CHECK_THROWS_WITH(vime::loop::check_rollout_invariants(
                        args, 0, {{"rollout/log_probs", -2.5}, {"rollout/ref_log_probs", -2.4}}),
                    Catch::Contains("rollout 0") && Catch::Contains("reference"));
  // Later rollouts may differ.
  CHECK_NOTHROW(vime::loop::check_rollout_invariants(
      args, 3, {{"rollout/log_probs", -2.5}, {"rollout/ref_log_probs", -2.4}}));
  // Step 0: ppo_kl must be 0; later steps need not be.
  CHECK_THROWS_WITH(vime::loop::check_step_invariants(args, 2, 0, {{"train/ppo_kl", 1e-4}}),
                    Catch::Contains("train/ppo_kl"));
  CHECK_NOTHROW(vime::loop::check_step_invariants(args, 2, 1, {{"train/ppo_kl", 1e-4}}));
  // kl_loss only while the actor equals the reference (rollout 0).
  CHECK_THROWS(vime::loop::check_step_invariants(args, 0, 0, {{"train/kl_loss", 1e-3}}));
  CHECK_NOTHROW(vime::loop::check_step_invariants(args, 1, 0, {{"train/kl_loss", 1e-3}}));
  // The train/rollout log-prob gap, against the threshold flag.
  CHECK_THROWS_WITH(vime::loop::check_step_invariants(
                        args, 1, 1, {{"train/train_rollout_logprob_abs_diff", 0.2}}),
                    Catch::Contains("0.1"));
  auto loose = ci_args({"--ci-train-rollout-logprob-abs-diff-threshold", "0.5"});
  CHECK_NOTHROW(vime::loop::check_step_invariants(loose, 1, 1,
                                                  {{"train/train_rollout_logprob_abs_diff", 0.2}}));
  auto no_kl = ci_args({"--ci-disable-kl-checker"});
  CHECK_NOTHROW(vime::loop::check_step_invariants(no_kl, 0, 0, {{"train/ppo_kl", 1.0}}));
  // Without --ci-test nothing is checked.
  auto plain = vime::loop::CiCheckOptions::from(vime::core::parse_args({}));
  CHECK_NOTHROW(vime::loop::check_step_invariants(plain, 0, 0, {{"train/ppo_kl", 1.0}}));
}

TEST_CASE("train data becomes the actor's batch; empty responses are dropped", "[loop]") {
  vime::TrainData data;
  data.tokens = {{1, 2, 3, 4}, {5, 6}, {7, 8, 9}};
  data.response_lengths = {2, 0, 1};
  data.rewards = {0.5, -1.0, -0.5};
  data.raw_reward = {1, 0, 0};
  data.truncated = {0, 1, 0};
  data.loss_masks = {{1, 0}, {}, {1}};
  data.rollout_log_probs = {{-0.1f, -0.2f}, {}, {-0.3f}};
  data.rollout_ids = {0, 1, 2};
  auto converted = vime::loop::to_train_batch(data);
  CHECK(converted.dropped_empty == 1);
  const auto& b = converted.batch;
  REQUIRE(b.size() == 2);
  CHECK(b.tokens[1] == std::vector<int64_t>{7, 8, 9});
  CHECK(b.loss_masks[0] == std::vector<float>{1, 0});
  CHECK(b.rewards == std::vector<double>{0.5, -0.5});
  CHECK(b.rollout_log_probs[1] == std::vector<float>{-0.3f});
  CHECK(b.rollout_ids == std::vector<int64_t>{0, 2});
  auto m = vime::loop::train_data_metrics(data);
  CHECK(m["rollout/raw_reward"] == Approx(1.0 / 3));
  CHECK(m["rollout/truncated"] == Approx(1.0 / 3));
  CHECK(m["rollout/total_lengths"] == Approx(3.0));
}
