// slime's loss vectors (spec §12) and gradient checks of the losses.
#include "vime/train/loss.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "train/tensor_checks.hpp"

namespace {

using vime::test::check_close;
using vime::test::t;

at::Tensor kl_of_ratio(std::vector<double> ratio) { return -t(ratio).log(); }

}  // namespace

using namespace vime::train;

TEST_CASE("PPO dual clip: slime's vector", "[train]") {
  auto out = ppo_policy_loss(kl_of_ratio({2, 2, 0.5}), t({2, -2, 2}), 0.2, 0.2, 1.5);
  check_close(out.loss, {-2.4, 3.0, -1.0});
}

TEST_CASE("PPO clip with eps 0.2/0.28", "[train]") {
  auto out =
      ppo_policy_loss(kl_of_ratio({1.5, 1.5, 0.5, 0.5, 4}), t({1, -1, 1, -1, -1}), 0.2, 0.28);
  check_close(out.loss, {-1.28, 1.5, -0.5, 0.8, 4.0});
  check_close(out.clipfrac, {1, 0, 0, 1, 0});
  auto dual = ppo_policy_loss(kl_of_ratio({4}), t({-1}), 0.2, 0.28, 3.0);
  check_close(dual.loss, {3.0});
  CHECK_THROWS_WITH(ppo_policy_loss(kl_of_ratio({4}), t({-1}), 0.2, 0.28, 0.5),
                    Catch::Contains("--eps-clip-c"));
}

TEST_CASE("CISPO: slime's vectors and its gradient", "[train]") {
  auto adv = t({1, -.5, 2, -1});
  auto lp = t({-.7, -1.2, -.4, -2.1}).requires_grad_(true);
  auto ratio = t({1, 1.14, 1.56, 0.4});
  auto out = cispo_loss(-ratio.log(), lp, adv, 0.2, 0.28);
  std::vector<double> clamped{1, 1.14, 1.28, 0.8};
  std::vector<double> expected, grad;
  for (int i = 0; i < 4; ++i) {
    expected.push_back(-clamped[i] * adv[i].item<double>() * lp[i].item<double>());
    grad.push_back(-clamped[i] * adv[i].item<double>());
  }
  check_close(out.loss, expected);
  check_close(out.clipfrac, {0, 0, 1, 1});
  out.loss.sum().backward();
  check_close(lp.grad(), grad);
  auto wide = cispo_loss(-t({1, 3, 9, .4}).log(), lp.detach(), adv, 1.0, 4.0);
  check_close(wide.loss / (-adv * lp.detach()), {1, 3, 5, .4});
}

TEST_CASE("PPO loss gradient matches finite differences", "[train]") {
  auto lp = t({-0.3, -1.1, -0.2, -2.0}).requires_grad_(true);
  auto old = t({-0.35, -0.9, -0.5, -2.0});
  auto adv = t({1.0, -0.5, 0.7, -1.2});
  auto loss_of = [&](const at::Tensor& x) {
    return ppo_policy_loss(old - x, adv, 0.2, 0.28, 3.0).loss.sum();
  };
  loss_of(lp).backward();
  for (int i = 0; i < 4; ++i) {
    auto plus = lp.detach().clone(), minus = lp.detach().clone();
    plus[i] += 1e-6;
    minus[i] -= 1e-6;
    double numeric = (loss_of(plus) - loss_of(minus)).item<double>() / 2e-6;
    CHECK(lp.grad()[i].item<double>() == Approx(numeric).margin(1e-6));
  }
}

TEST_CASE("KL estimators: slime's vectors", "[train]") {
  auto lp = t({.5, .7, .9}), ref = t({.4, .5, .6});
  check_close(approx_kl(lp, ref, KlType::kK1), {.1, .2, .3});
  check_close(approx_kl(lp, ref, KlType::kK2), {.005, .02, .045});
  check_close(approx_kl(lp, ref, KlType::kK3), {0.00483742, 0.01873075, 0.04081822}, 1e-7);
  check_close(approx_kl(lp, ref, KlType::kLowVarKl), {0.00483742, 0.01873075, 0.04081822}, 1e-7);
  check_close(approx_kl(t({-20}), t({0}), KlType::kLowVarKl), {10});
  CHECK(parse_kl_type("low_var_kl") == KlType::kLowVarKl);
  CHECK_THROWS_WITH(parse_kl_type("k4"), Catch::Contains("--kl-loss-type"));
}

TEST_CASE("TIS and icepop weights", "[train]") {
  vime::TisInputs in;
  in.pg_loss = t({1, 1});
  in.train_log_probs = {t({0, 0})};
  in.rollout_log_probs = {t({-1, 3})};  // Δ = 1, −3
  in.loss_masks = {t({1, 1})};
  auto tis = vanilla_tis(in, 0.0, 2.0);
  check_close(tis.pg_loss, {2.0, 0.049787}, 1e-6);
  check_close(tis.metrics["tis_clipfrac"][0], {1, 0});
  auto ice = icepop_tis(in, 0.5, 5.0);
  check_close(ice.pg_loss, {2.718281828, 0.0}, 1e-6);
}

TEST_CASE("GSPO sequence KL and OPSM mask", "[train]") {
  auto kl = t({0.1, 0.3, 9.0, 0.2, 0.4});
  std::vector<at::Tensor> masks{t({1, 1, 0}), t({1, 1})};
  auto s = sequence_mean_kl(kl, masks);
  check_close(s, {0.2, 0.2, 0.2, 0.3, 0.3});
  check_close(opsm_mask(t({-1, 1, -1, -1, 1}), s, 0.25), {1, 1, 1, 0, 1});
}

TEST_CASE("value loss and values from a value head", "[train]") {
  auto out = value_loss(t({1.0, 0.0}), t({0.5, 0.0}), t({2.0, 1.0}), 0.2);
  // V−V_old = 0.5 > 0.2: Vc = 0.7, max((0.7−2)², (1−2)²) = 1.69.
  check_close(out.loss, {1.69, 1.0});
  check_close(out.clipfrac, {1, 0});
  check_close(response_values(t({1, 2, 3, 4}).unsqueeze(1), 4, 2), {2, 3});
}

TEST_CASE("sum of sample mean, per sample and per token", "[train]") {
  std::vector<at::Tensor> masks{t({1, 1, 0}), t({1})};
  auto x = t({1, 3, 100, 5});
  CHECK(sum_of_sample_mean({3, 1}, masks, {}, false)(x).item<double>() == Approx(2 + 5));
  CHECK(sum_of_sample_mean({3, 1}, masks, {4, 1}, false)(x).item<double>() == Approx(1 + 5));
  CHECK(sum_of_sample_mean({3, 1}, masks, {}, true)(x).item<double>() == Approx(9));
}
