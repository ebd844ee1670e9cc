// AdamW with fp32 master weights, clipping, accumulation; Megatron's LR schedule; slime's DP
// schedule.
#include "vime/train/optimizer.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "vime/train/dp_schedule.hpp"

TEST_CASE("AdamW step equals the written-out formula, with decoupled decay", "[train]") {
  auto w = at::tensor(std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f}).reshape({2, 2});
  auto b = at::tensor(std::vector<float>{0.1f, 0.2f});
  vime::OptimizerConfig cfg;
  cfg.weight_decay = 0.1;
  cfg.clip_grad = 0;
  vime::Optimizer opt({{"w", w}, {"b.bias", b}}, cfg);
  auto gw = at::tensor(std::vector<float>{0.5f, -1.0f, 0.25f, 2.0f}).reshape({2, 2});
  w.mutable_grad() = gw.clone();
  b.mutable_grad() = at::tensor(std::vector<float>{1.0f, -1.0f});
  auto w0 = w.clone(), b0 = b.clone();
  opt.accumulate_grads();
  auto r = opt.step(0.01);
  CHECK(r.is_updated);
  CHECK(r.grad_norm == Approx(std::sqrt(0.25 + 1 + 0.0625 + 4 + 1 + 1)));
  // Step 1: m̂ = g, v̂ = g², update = g/(|g| + eps) = sign(g).
  auto expected_w = w0 * (1 - 0.01 * 0.1) - 0.01 * gw / (gw.abs() + 1e-8);
  CHECK(at::allclose(w, expected_w, 1e-6, 1e-7));
  auto expected_b = b0 - 0.01 * at::tensor(std::vector<float>{1.0f, -1.0f});  // no decay on bias
  CHECK(at::allclose(b, expected_b, 1e-6, 1e-7));
}

TEST_CASE("bf16 parameters train through fp32 master weights and accumulated grads", "[train]") {
  auto p = at::full({4}, 1.0, at::TensorOptions().dtype(at::kBFloat16));
  vime::OptimizerConfig cfg;
  cfg.weight_decay = 0;
  cfg.clip_grad = 0;
  vime::Optimizer opt({{"p", p}}, cfg);
  // Micro-batch grads accumulate in fp32: 1 + 64 * 2^-9 = 1.125 exactly. A bf16 sum (ulp 2^-7 at
  // 1.0) rounds each 2^-9 away and stays at 1.
  p.mutable_grad() = at::full({4}, 1.0, p.options());
  opt.accumulate_grads();
  for (int mb = 0; mb < 64; ++mb) {
    p.mutable_grad() = at::full({4}, std::ldexp(1.0, -9), p.options());
    opt.accumulate_grads();
    CHECK_FALSE(p.grad().defined());
  }
  CHECK(opt.main_grads()[0][0].item<float>() == 1.125f);
  opt.zero_grad();
  for (int i = 0; i < 10; ++i) {
    p.mutable_grad() = at::full({4}, 1.0, p.options());
    opt.accumulate_grads();
    opt.step(1e-4);
  }
  // 10 steps of 1e-4 move the master by ~1e-3; a bf16-only update (ulp 2^-7 at 1.0) would not.
  auto master = opt.state_tensors();
  REQUIRE(master.size() == 3);
  CHECK(master[2].first == "master.p");
  CHECK(master[2].second[0].item<float>() == Approx(1.0 - 1e-3).epsilon(1e-4));
}

TEST_CASE("grad-norm clipping and non-finite gradients", "[train]") {
  auto p = at::zeros({2});
  vime::OptimizerConfig cfg;
  cfg.clip_grad = 1.0;
  cfg.weight_decay = 0;
  vime::Optimizer opt({{"p", p}}, cfg);
  p.mutable_grad() = at::tensor(std::vector<float>{3.0f, 4.0f});
  opt.accumulate_grads();
  CHECK(opt.step(0.1).grad_norm == Approx(5.0));
  p.mutable_grad() = at::tensor(std::vector<float>{NAN, 1.0f});
  opt.accumulate_grads();
  auto before = p.clone();
  auto r = opt.step(0.1);
  CHECK_FALSE(r.is_updated);
  CHECK(p.equal(before));
  CHECK(opt.num_steps() == 1);
}

TEST_CASE("LR schedule: warmup, then linear or cosine decay to min-lr", "[train]") {
  vime::LrScheduler::Config c;
  c.max_lr = 1.0;
  c.min_lr = 0.1;
  c.warmup_steps = 4;
  c.decay_steps = 14;
  c.decay_style = "linear";
  vime::LrScheduler linear(c);
  CHECK(linear.lr_at(0) == Approx(0.0));
  CHECK(linear.lr_at(2) == Approx(0.5));
  CHECK(linear.lr_at(4) == Approx(1.0));
  CHECK(linear.lr_at(9) == Approx(0.55));
  CHECK(linear.lr_at(14) == Approx(0.1));
  CHECK(linear.lr_at(20) == Approx(0.1));
  c.decay_style = "cosine";
  vime::LrScheduler cosine(c);
  CHECK(cosine.lr_at(9) == Approx(0.55));
  CHECK(cosine.lr_at(6) == Approx(0.1 + 0.9 * 0.5 * (std::cos(M_PI * 0.2) + 1)));
  c.decay_style = "constant";
  CHECK(vime::LrScheduler(c).lr_at(9) == Approx(1.0));
  c.decay_style = "wsd";
  CHECK_THROWS_WITH(vime::LrScheduler(c), Catch::Contains("--lr-decay-style"));
}

TEST_CASE("DP schedule: steps, first-fit micro-batches, divisibility, round-robin", "[train]") {
  using namespace vime::train;
  // 5 rollouts of 1 sample, gbs 2: two steps, the last rollout is dropped.
  std::vector<int64_t> lengths{5, 7, 3, 9, 4};
  DpScheduleConfig cfg;
  cfg.global_batch_size = 2;
  cfg.max_tokens_per_gpu = 10;
  auto plans = plan_steps(lengths, {}, cfg);
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].samples == std::vector<int64_t>{0, 1});
  CHECK(plans[0].per_rank[0] == std::vector<MicroBatch>{{0}, {1}});  // 5 + 7 > 10
  CHECK(plans[1].per_rank[0] == std::vector<MicroBatch>{{2}, {3}});
  CHECK(first_fit({0, 1, 2, 3, 4}, lengths, 12) == std::vector<MicroBatch>{{0, 1}, {2, 3}, {4}});
  CHECK(first_fit({3}, {0, 0, 0, 50}, 12) == std::vector<MicroBatch>{{3}});  // oversize: own bin
  // Samples of one rollout id stay in one step; dp 2 splits the one bin in two.
  cfg.global_batch_size = 1;
  cfg.dp_size = 2;
  cfg.max_tokens_per_gpu = 100;
  auto grouped = plan_steps({5, 5, 5, 5}, {7, 7, 8, 8}, cfg);
  REQUIRE(grouped.size() == 2);
  CHECK(grouped[0].samples == std::vector<int64_t>{0, 1});
  CHECK(grouped[0].per_rank[0] == std::vector<MicroBatch>{{0}});
  CHECK(grouped[0].per_rank[1] == std::vector<MicroBatch>{{1}});
  // Static micro-batches.
  DpScheduleConfig stat;
  stat.global_batch_size = 4;
  stat.micro_batch_size = 2;
  auto s = plan_steps({1, 1, 1, 1}, {}, stat);
  CHECK(s[0].per_rank[0] == std::vector<MicroBatch>{{0, 1}, {2, 3}});
  stat.dp_size = 3;
  stat.global_batch_size = 1;
  CHECK_THROWS_WITH(plan_steps({1, 1}, {}, stat), Catch::Contains("--global-batch-size"));
}
