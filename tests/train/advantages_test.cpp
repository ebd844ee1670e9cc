// Returns and advantages against slime's vectors (spec §12) and serial references.
#include "vime/train/advantages.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <catch2/catch.hpp>

#include "train/tensor_checks.hpp"

namespace {

using vime::test::check_close;
using vime::test::t;

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

TEST_CASE("GRPO reward normalization: slime's vectors", "[train]") {
  auto a = normalize_group_rewards({1, 0, 0, 1}, 4, true);
  check_close(t(a), {0.866024, -0.866024, -0.866024, 0.866024});
  auto b = normalize_group_rewards({1, 1, 1, 0}, 4, true);
  check_close(t(b), {0.499999, 0.499999, 0.499999, -1.499997});
  auto c = normalize_group_rewards({1, 0, 0, 1}, 4, false);
  check_close(t(c), {0.5, -0.5, -0.5, 0.5});
  auto groups = normalize_group_rewards({1, 0, 3, 3}, 2, false);
  check_close(t(groups), {0.5, -0.5, 0, 0});
  auto whole = normalize_group_rewards({1, 0, 2}, 2, false);  // 3 is no multiple of 2
  check_close(t(whole), {0, -1, 1});
}

TEST_CASE("advantage whitening over masked tokens", "[train]") {
  std::vector<at::Tensor> adv{t({1, 2, 100}), t({3})};
  std::vector<at::Tensor> masks{t({1, 1, 0}), t({1})};
  auto out = whiten_advantages(adv, masks);
  // μ = 2, var = ((1+4+9)/3 − 4)·3/2 = 1.
  check_close(out[0], {-1, 0, 98}, 1e-6);
  check_close(out[1], {1}, 1e-6);
}
