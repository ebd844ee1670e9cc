// slime's loss vectors (tests/test_policy_loss.py, ...) and gradient checks of the losses.
#include "vime/train/loss.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "train/tensor_checks.hpp"
#include "vime/core/arg_parser.hpp"

namespace {

using vime::test::check_close;
using vime::test::t;

at::Tensor kl_of_ratio(std::vector<double> ratio) { return -t(ratio).log(); }

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

at::Tensor f(std::vector<float> v) { return at::tensor(v, at::kFloat); }

// A micro-batch of two samples (3 and 2 response tokens, the first with its last token masked out)
// with old, reference and rollout log-probs and advantages; the forward's log-probs need grad.
struct PolicyCase {
  vime::train::LossBatch batch;
  vime::train::ForwardOutput forward;
  PolicyCase() {
    batch.total_lengths = {5, 3};
    batch.response_lengths = {3, 2};
    batch.rollout_mask_sums = {2, 2};
    batch.loss_masks = f({1, 1, 0, 1, 1});
    batch.advantages = f({1, -1, 2, 0.5, -0.5});
    batch.log_probs = f({-0.5, -1.0, -2.0, -0.2, -0.3});
    batch.ref_log_probs = f({-0.6, -0.8, -2.5, -0.1, -0.3});
    batch.rollout_log_probs = f({-0.4, -1.1, -2.0, -0.25, -0.3});
    forward.response.log_probs = f({-0.3, -1.4, -1.0, -0.1, -0.6}).requires_grad_(true);
    forward.response.entropy = f({1.0, 2.0, 3.0, 0.5, 0.25});
  }
  const at::Tensor& lp() const { return forward.response.log_probs; }
};

double value_of(const at::Tensor& x) { return x.item<double>(); }

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

TEST_CASE("policy_loss_function: PPO clip, entropy and KL loss over a micro-batch", "[train]") {
  vime::train::TrainContext ctx(
      args_of({"--eps-clip", "0.2", "--eps-clip-high", "0.28", "--entropy-coef", "0.01",
               "--use-kl-loss", "--kl-loss-coef", "0.1", "--kl-loss-type", "low_var_kl"}));
  PolicyCase c;
  auto ssm = sum_of_sample_mean(c.batch, false);
  auto out = policy_loss_function(ctx, c.batch, c.forward, ssm);
  auto pg = ppo_policy_loss(c.batch.log_probs - c.lp(), c.batch.advantages, 0.2, 0.28);
  auto kl = approx_kl(c.lp(), c.batch.ref_log_probs, KlType::kLowVarKl);
  const double want = value_of(ssm(pg.loss)) - 0.01 * value_of(ssm(c.forward.response.entropy)) +
                      0.1 * value_of(ssm(kl));
  CHECK(value_of(out.loss) == Approx(want).margin(1e-6));
  CHECK(value_of(out.metrics.at("loss")) == Approx(want).margin(1e-6));
  CHECK(value_of(out.metrics.at("pg_loss")) == Approx(value_of(ssm(pg.loss))).margin(1e-6));
  CHECK(value_of(out.metrics.at("pg_clipfrac")) == Approx(value_of(ssm(pg.clipfrac))));
  CHECK(value_of(out.metrics.at("kl_loss")) == Approx(value_of(ssm(kl))).margin(1e-6));
  CHECK(value_of(out.metrics.at("train_rollout_logprob_abs_diff")) ==
        Approx(value_of(ssm((c.lp() - c.batch.rollout_log_probs).abs()))).margin(1e-6));
  out.loss.backward();
  CHECK(c.lp().grad().defined());
  CHECK(c.lp().grad()[2].item<double>() == 0.0);  // a masked-out token gets no gradient
}

TEST_CASE("policy_loss_function: without old log-probs the ratio is 1 and ppo_kl 0", "[train]") {
  vime::train::TrainContext ctx(args_of({}));
  PolicyCase c;
  c.batch.log_probs = at::Tensor();
  auto ssm = sum_of_sample_mean(c.batch, false);
  auto out = policy_loss_function(ctx, c.batch, c.forward, ssm);
  CHECK(value_of(out.metrics.at("ppo_kl")) == 0.0);
  // (−1 + 1)/2 + (−0.5 + 0.5)/2 = 0: the pg loss is −Σ A·m / rollout_mask_sums.
  CHECK(value_of(out.metrics.at("pg_loss")) == Approx(0.0).margin(1e-7));
  CHECK(out.metrics.count("kl_loss") == 0);
}

TEST_CASE("policy_loss_function: gspo clips on the sequence KL, cispo truncates", "[train]") {
  PolicyCase c;
  auto ssm = sum_of_sample_mean(c.batch, false);
  auto ppo_kl = c.batch.log_probs - c.lp();
  auto masks = c.batch.split(c.batch.loss_masks);
  vime::train::TrainContext gspo(args_of({"--advantage-estimator", "gspo"}));
  auto want_gspo =
      ppo_policy_loss(sequence_mean_kl(ppo_kl, masks), c.batch.advantages, 0.2, 0.2).loss;
  CHECK(value_of(policy_loss_function(gspo, c.batch, c.forward, ssm).metrics.at("pg_loss")) ==
        Approx(value_of(ssm(want_gspo))).margin(1e-6));
  vime::train::TrainContext cispo(
      args_of({"--advantage-estimator", "cispo", "--eps-clip", "1", "--eps-clip-high", "4"}));
  auto want_cispo = cispo_loss(ppo_kl, c.lp(), c.batch.advantages, 1.0, 4.0).loss;
  CHECK(value_of(policy_loss_function(cispo, c.batch, c.forward, ssm).metrics.at("pg_loss")) ==
        Approx(value_of(ssm(want_cispo))).margin(1e-6));
}

TEST_CASE("policy_loss_function: --use-tis weights the pg loss and logs its metrics", "[train]") {
  vime::train::TrainContext ctx(args_of({"--use-tis", "--tis-clip", "1.1"}));
  PolicyCase c;
  auto ssm = sum_of_sample_mean(c.batch, false);
  auto out = policy_loss_function(ctx, c.batch, c.forward, ssm);
  vime::TisInputs in;
  in.pg_loss = ppo_policy_loss(c.batch.log_probs - c.lp(), c.batch.advantages, 0.2, 0.2).loss;
  in.train_log_probs = c.batch.split(c.batch.log_probs);
  in.rollout_log_probs = c.batch.split(c.batch.rollout_log_probs);
  in.loss_masks = c.batch.split(c.batch.loss_masks);
  auto tis = vanilla_tis(in, 0.0, 1.1);
  CHECK(value_of(out.metrics.at("pg_loss")) == Approx(value_of(ssm(tis.pg_loss))).margin(1e-6));
  CHECK(value_of(out.metrics.at("tis")) ==
        Approx(value_of(ssm(at::cat(tis.metrics.at("tis"))))).margin(1e-6));
  CHECK(out.metrics.count("tis_clipfrac") == 1);
  CHECK(out.metrics.count("tis_abs") == 1);
}

TEST_CASE("loss_function picks the loss by --loss-type; value_loss_function", "[train]") {
  PolicyCase c;
  auto ssm = sum_of_sample_mean(c.batch, false);
  vime::train::TrainContext sft(args_of({"--loss-type", "sft_loss"}));
  auto out = loss_function(sft, c.batch, c.forward, ssm);
  CHECK(value_of(out.loss) == Approx(-value_of(ssm(c.lp()))));
  CHECK(out.metrics.size() == 1);
  vime::train::TrainContext policy(args_of({}));
  CHECK(loss_function(policy, c.batch, c.forward, ssm).metrics.count("pg_loss") == 1);

  c.batch.values = f({0.5, 0, 0, 0, 0});
  c.batch.returns = f({2, 1, 0, 0, 0});
  auto values = f({1, 0, 0, 0, 0});
  auto v = value_loss_function(0.2, c.batch, values, ssm);
  auto want = value_loss(values, c.batch.values, c.batch.returns, 0.2);
  CHECK(value_of(v.loss) == Approx(value_of(ssm(want.loss))));
  CHECK(value_of(v.metrics.at("value_clipfrac")) == Approx(value_of(ssm(want.clipfrac))));
}

TEST_CASE("a micro-batch's loss inputs: concatenated once, split per sample, plugin maps",
          "[train]") {
  vime::train::TrainBatch batch;
  batch.tokens = {{1, 2, 3, 4}, {5, 6, 7}, {8, 9}};
  batch.response_lengths = {2, 1, 1};
  batch.loss_masks = {{1, 0}, {}, {}};
  batch.rewards = {1, 0, 0.5};
  batch.rollout_ids = {7, 7, 9};
  auto data = vime::train::RolloutTensors::from(batch, at::kCPU);
  CHECK(data.mask_sums == std::vector<double>{1, 1, 1});
  CHECK(data.rollout_mask_sums == std::vector<double>{2, 2, 1});
  data.advantages = {f({1, 2}), f({3}), f({4})};
  auto lb = vime::train::LossBatch::of(batch, data, {2, 0}, at::kCPU);
  CHECK(lb.total_lengths == std::vector<int64_t>{2, 4});
  CHECK(lb.response_lengths == std::vector<int64_t>{1, 2});
  CHECK(lb.rollout_mask_sums == std::vector<double>{1, 2});
  check_close(lb.loss_masks, {1, 1, 0});
  check_close(lb.advantages, {4, 1, 2});
  CHECK_FALSE(lb.log_probs.defined());
  CHECK(lb.packed.num_tokens() == 6);
  auto parts = lb.split(lb.advantages);
  REQUIRE(parts.size() == 2);
  check_close(parts[1], {1, 2});
  auto rd = lb.to_rollout_data();
  CHECK(rd.at("tokens")[1].equal(at::tensor({1, 2, 3, 4}, at::kLong)));
  CHECK(rd.at("response_lengths")[1].item<int64_t>() == 2);
  CHECK(rd.count("advantages") == 1);
  CHECK(rd.count("log_probs") == 0);
  auto hook = data.to_rollout_data();
  CHECK(hook.at("rewards").size() == 3);
  CHECK(hook.count("returns") == 0);
  batch.loss_masks = {{1}, {}, {}};
  CHECK_THROWS_WITH(vime::train::RolloutTensors::from(batch, at::kCPU),
                    Catch::Contains("sample 0 has a loss_mask of 1"));
}
