// Returns and advantages against slime's vectors (tests/test_chunked_gae.py) and serial references.
#include "vime/train/advantages.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <catch2/catch.hpp>

#include "train/tensor_checks.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/train/loss.hpp"

namespace {

using vime::test::check_close;
using vime::test::t;

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

// Two samples of 3 and 2 response tokens (rewards 1 and -0.5), the first with its last token
// masked out, with old and reference log-probs.
vime::train::RolloutTensors two_samples() {
  vime::train::TrainBatch batch;
  batch.tokens = {{1, 2, 3, 4, 5}, {6, 7, 8}};
  batch.response_lengths = {3, 2};
  batch.loss_masks = {{1, 1, 0}, {}};
  batch.rewards = {1.0, -0.5};
  auto data = vime::train::RolloutTensors::from(batch, at::kCPU);
  data.log_probs = {at::tensor({-0.5f, -1.0f, -2.0f}), at::tensor({-0.2f, -0.3f})};
  data.ref_log_probs = {at::tensor({-0.6f, -0.8f, -2.5f}), at::tensor({-0.1f, -0.3f})};
  return data;
}

}  // namespace

using namespace vime::train;

TEST_CASE("REINFORCE++ returns: slime's vector", "[train]") {
  auto a = reinforce_plus_plus(t({.2, .1, .3, .4, .5}), t({0, 1, 1, 1, 0}), 2.0, 0.1, 0.99);
  check_close(a.returns, {1.86248304, 1.881296, 1.9104, 1.96, 0.0});
  auto b = reinforce_plus_plus(t({.4, .2, .1}), t({1, 1, 1}), -1.0, 0.1, 0.99);
  check_close(b.returns, {-1.049701, -1.0199, -1.01});
  check_close(b.advantages, {-1.049701, -1.0199, -1.01});
}

TEST_CASE("chunked discounted returns match the serial scan", "[train]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  for (double gamma : {0.0, 0.5, 0.99, 1.0}) {
    for (int64_t length : {1, 127, 128, 129, 1000}) {
      CAPTURE(gamma, length);
      auto r = at::randn({3, length}, gen, at::TensorOptions().dtype(at::kDouble));
      auto chunked = discounted_returns(r, gamma);
      auto serial = discounted_returns_serial(r, gamma);
      CHECK(at::allclose(chunked, serial, 1e-9, 1e-9));
    }
  }
}

TEST_CASE("GAE: chunked equals vanilla, and slime's vector", "[train]") {
  auto out = gae(t({0, 0, 1}), t({.5, .6, .7}), 0.99, 0.95);
  check_close(out.advantages, {0.44682858, 0.37515, 0.3});
  check_close(out.returns, {0.94682858, 0.97515, 1.0});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  auto opts = at::TensorOptions().dtype(at::kDouble);
  auto r = at::randn({300}, gen, opts), v = at::randn({300}, gen, opts);
  CHECK(at::allclose(gae(r, v, 0.99, 0.95).advantages, gae_serial(r, v, 0.99, 0.95).advantages,
                     1e-5, 1e-5));
}

TEST_CASE("PPO advantages with KL in the reward", "[train]") {
  auto out = ppo_advantages(t({.1, .2, .3}), t({0, 0, 0}), 1.0, 0.05, 1.0, 1.0);
  check_close(out.advantages, {0.97, 0.975, 0.985});
  check_close(out.returns, {0.97, 0.975, 0.985});
}

TEST_CASE("REINFORCE++ baseline", "[train]") {
  auto out = reinforce_plus_plus_baseline(t({.1, .2}), 0.5, 0.1);
  check_close(out.advantages, {0.49, 0.48});
}

TEST_CASE("advantage whitening over masked tokens", "[train]") {
  std::vector<at::Tensor> adv{t({1, 2, 100}), t({3})};
  std::vector<at::Tensor> masks{t({1, 1, 0}), t({1})};
  auto out = whiten_advantages(adv, masks);
  // μ = 2, var = ((1+4+9)/3 − 4)·3/2 = 1.
  check_close(out[0], {-1, 0, 98}, 1e-6);
  check_close(out[1], {1}, 1e-6);
}

TEST_CASE("compute_advantages_and_returns: grpo broadcasts the reward and ignores --kl-coef",
          "[train]") {
  vime::train::TrainContext ctx(args_of({"--advantage-estimator", "grpo", "--kl-coef", "0.1"}));
  auto data = two_samples();
  compute_advantages_and_returns(ctx, data);
  REQUIRE(data.advantages.size() == 2);
  check_close(data.advantages[0], {1, 1, 1});
  check_close(data.returns[1], {-0.5, -0.5});
  CHECK(data.advantages[0].scalar_type() == at::kFloat);
}

TEST_CASE("compute_advantages_and_returns: reinforce++ with KL(old || ref) in the reward",
          "[train]") {
  vime::train::TrainContext ctx(
      args_of({"--advantage-estimator", "reinforce_plus_plus", "--kl-coef", "0.1", "--gamma", "0.9",
               "--kl-loss-type", "k3"}));
  auto data = two_samples();
  compute_advantages_and_returns(ctx, data);
  for (size_t i = 0; i < 2; ++i) {
    auto kl = approx_kl(data.log_probs[i], data.ref_log_probs[i], KlType::kK3);
    auto want = reinforce_plus_plus(kl, data.loss_masks[i], data.rewards[i], 0.1, 0.9);
    CHECK(at::allclose(data.advantages[i], want.advantages));
    CHECK(at::allclose(data.returns[i], want.returns));
  }
  // Without old log-probs the KL is taken from the reference against itself: 0.
  auto no_old = two_samples();
  no_old.log_probs.clear();
  compute_advantages_and_returns(ctx, no_old);
  auto plain = reinforce_plus_plus(at::zeros({3}), no_old.loss_masks[0], 1.0, 0.1, 0.9);
  CHECK(at::allclose(no_old.advantages[0], plain.advantages));
}

TEST_CASE("compute_advantages_and_returns: ppo needs values, then runs GAE", "[train]") {
  vime::train::TrainContext ctx(
      args_of({"--advantage-estimator", "ppo", "--gamma", "1.0", "--lambd", "0.95"}));
  auto data = two_samples();
  CHECK_THROWS_WITH(compute_advantages_and_returns(ctx, data),
                    Catch::Contains("needs critic values"));
  data.values = {at::tensor({0.1f, 0.2f, 0.3f}), at::tensor({0.0f, -0.4f})};
  compute_advantages_and_returns(ctx, data);
  auto want = ppo_advantages(at::zeros({2}), data.values[1], -0.5, 0.0, 1.0, 0.95);
  CHECK(at::allclose(data.advantages[1], want.advantages));
  CHECK(at::allclose(data.returns[1], want.returns));
  CHECK(data.returns[0][-1].item<double>() == Approx(1.0));  // γ = 1: R at the last position
}

TEST_CASE("compute_advantages_and_returns: --normalize-advantages whitens over the rollout",
          "[train]") {
  vime::train::TrainContext plain(args_of({"--advantage-estimator", "grpo"}));
  vime::train::TrainContext whitened(
      args_of({"--advantage-estimator", "grpo", "--normalize-advantages"}));
  auto a = two_samples(), b = two_samples();
  compute_advantages_and_returns(plain, a);
  compute_advantages_and_returns(whitened, b);
  auto want = whiten_advantages(a.advantages, a.loss_masks);
  for (size_t i = 0; i < 2; ++i) CHECK(at::allclose(b.advantages[i], want[i]));
  CHECK(at::allclose(b.returns[0], a.returns[0]));  // returns are not whitened
}

TEST_CASE("train options: estimator and loss type parsed once, with the flag in errors",
          "[train]") {
  auto o = vime::train::TrainOptions::from(
      args_of({"--advantage-estimator", "gspo", "--eps-clip", "0.3", "--loss-type", "sft_loss"}));
  CHECK(o.advantages.estimator == AdvantageEstimator::kGspo);
  CHECK(o.policy_loss.use_sequence_kl);
  CHECK_FALSE(o.policy_loss.use_cispo);
  CHECK(o.policy_loss.eps_clip_high == 0.3);  // --eps-clip-high unset: --eps-clip
  CHECK(o.loss_type == LossType::kSftLoss);
  CHECK_THROWS_WITH(parse_advantage_estimator("a2c"),
                    Catch::Contains("--advantage-estimator a2c is not supported"));
  CHECK_THROWS_WITH(parse_loss_type("dpo"), Catch::Contains("--loss-type dpo: expected"));
  CHECK_THROWS_WITH(vime::train::TrainContext(args_of({"--loss-type", "custom_loss"})),
                    Catch::Contains("--custom-loss-function-path"));
}
