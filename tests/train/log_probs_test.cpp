// Chunked fp32 log-probs and entropy: values and gradients against the direct formula.
#include "vime/train/log_probs.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>

#include "vime/train/linear_log_probs.hpp"

using namespace vime::train;

TEST_CASE("chunked log-probs and entropy equal the direct computation, with gradients", "[train]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  auto opts = at::TensorOptions().dtype(at::kDouble);
  auto logits = (at::randn({9, 50}, gen, opts) * 3).requires_grad_(true);
  auto rows = at::tensor(std::vector<int64_t>{0, 2, 3, 7, 8}, at::kLong);
  auto targets = at::tensor(std::vector<int64_t>{4, 49, 0, 7, 7}, at::kLong);
  const double temperature = 0.7;
  auto out = token_log_probs(logits, rows, targets, temperature, /*chunk_rows=*/2);
  auto z = logits.index_select(0, rows) / temperature;
  auto log_p = at::log_softmax(z, -1);
  auto direct_lp = log_p.gather(1, targets.unsqueeze(1)).squeeze(1);
  auto direct_h = at::logsumexp(z, -1) - (at::softmax(z, -1) * z).sum(-1);  // slime's form
  CHECK(at::allclose(out.log_probs.to(at::kDouble), direct_lp, 1e-5, 1e-5));
  CHECK(at::allclose(out.entropy.to(at::kDouble), direct_h, 1e-5, 1e-5));
  auto weights_lp = at::randn({5}, gen, at::TensorOptions().dtype(at::kFloat));
  auto weights_h = at::randn({5}, gen, at::TensorOptions().dtype(at::kFloat));
  auto g = torch::autograd::grad(
      {(out.log_probs * weights_lp).sum() + (out.entropy * weights_h).sum()}, {logits})[0];
  auto g_ref = torch::autograd::grad({(direct_lp * weights_lp.to(at::kDouble)).sum() +
                                      (direct_h * weights_h.to(at::kDouble)).sum()},
                                     {logits})[0];
  CHECK(at::allclose(g, g_ref, 1e-5, 1e-6));
  CHECK(g[1].abs().sum().item<double>() == 0);  // row 1 is not scored
}

TEST_CASE("response rows pick the logits row before each response token", "[train]") {
  auto tokens = at::tensor(std::vector<int64_t>{10, 11, 12, 13, 20, 21, 22}, at::kLong);
  auto rr = response_rows(tokens, {4, 3}, {2, 1});
  CHECK(rr.rows.equal(at::tensor(std::vector<int64_t>{1, 2, 5}, at::kLong)));
  CHECK(rr.targets.equal(at::tensor(std::vector<int64_t>{12, 13, 22}, at::kLong)));
  CHECK_THROWS_WITH(response_rows(tokens, {4, 3}, {4, 1}), Catch::Contains("no prompt token"));
}

TEST_CASE("log-probs from hidden states and the output layer equal those of the logits",
          "[train]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  auto opts = at::TensorOptions().dtype(at::kDouble);
  auto hidden = at::randn({9, 6}, gen, opts).requires_grad_(true);
  auto weight = (at::randn({40, 6}, gen, opts) * 0.7).requires_grad_(true);
  auto rows = at::tensor(std::vector<int64_t>{0, 2, 3, 7, 8}, at::kLong);
  auto targets = at::tensor(std::vector<int64_t>{4, 39, 0, 7, 7}, at::kLong);
  auto w_lp = at::randn({5}, gen, opts);
  auto w_h = at::randn({5}, gen, opts);
  for (double temperature : {1.0, 0.7}) {
    for (bool use_entropy : {false, true}) {
      CAPTURE(temperature, use_entropy);
      auto fused = linear_token_log_probs(hidden, weight, rows, targets, temperature,
                                          /*chunk_rows=*/2, /*with_entropy=*/true);
      auto direct = token_log_probs(at::mm(hidden, weight.t()), rows, targets, temperature, 3);
      CHECK(at::allclose(fused.log_probs.to(at::kDouble), direct.log_probs.to(at::kDouble), 1e-5,
                         1e-6));
      CHECK(
          at::allclose(fused.entropy.to(at::kDouble), direct.entropy.to(at::kDouble), 1e-5, 1e-6));
      auto objective = [&](const TokenLogProbs& t) {
        auto o = (t.log_probs.to(at::kDouble) * w_lp).sum();
        return use_entropy ? o + (t.entropy.to(at::kDouble) * w_h).sum() : o;
      };
      auto g = torch::autograd::grad({objective(fused)}, {hidden, weight});
      auto g_ref = torch::autograd::grad({objective(direct)}, {hidden, weight});
      CHECK(at::allclose(g[0], g_ref[0], 1e-5, 1e-6));
      CHECK(at::allclose(g[1], g_ref[1], 1e-5, 1e-6));
      CHECK(g[0][1].abs().sum().item<double>() == 0);  // hidden row 1 is not scored
    }
  }
  auto no_entropy = linear_token_log_probs(hidden, weight, at::Tensor(), at::zeros({9}, at::kLong),
                                           1.0, 4, false);
  CHECK_FALSE(no_entropy.entropy.defined());
  CHECK(no_entropy.log_probs.size(0) == 9);
}
