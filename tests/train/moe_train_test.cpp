// Training an MoE model: the actor logs Megatron's load-balancing loss and adds it to the loss with
// --moe-aux-loss-coeff (the router moves differently), and refuses it with activation recompute.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "common/model_presets.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/rank_reducer.hpp"

namespace {

vime::ModelConfig micro_qwen3_moe() {
  auto c = vime::presets::micro_qwen3();
  c.model_type = "qwen3_moe";
  c.moe.num_experts = 4;
  c.moe.num_experts_per_tok = 2;
  c.moe.moe_intermediate_size = 16;
  c.moe.norm_topk_prob = true;
  return c;
}

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

vime::train::TrainBatch sft_batch() {
  vime::train::TrainBatch b;
  for (int i = 0; i < 4; ++i) {
    std::vector<int64_t> seq;
    for (int t = 0; t < 12; ++t) seq.push_back((3 * i + t) % 40);
    b.tokens.push_back(seq);
    b.response_lengths.push_back(6);
    b.rewards.push_back(0.0);
  }
  return b;
}

}  // namespace

TEST_CASE("MoE training logs the load-balancing loss and adds it with --moe-aux-loss-coeff",
          "[train]") {
  auto run = [](const std::string& coeff) {
    vime::Model model(micro_qwen3_moe(), at::kFloat, at::kCPU, 7);
    auto args = args_of({"--loss-type", "sft_loss", "--lr", "1e-2", "--lr-decay-style", "constant",
                         "--global-batch-size", "4", "--micro-batch-size", "2",
                         "--moe-aux-loss-coeff", coeff});
    vime::train::SingleRank rank;
    vime::train::Actor actor(args, model, nullptr, rank);
    auto metrics = actor.train(0, sft_batch());
    at::Tensor router;
    for (const auto& [name, t] : model.named_parameters())
      if (name == "model.layers.1.mlp.gate.weight") router = t.detach().clone();
    REQUIRE(router.defined());
    return std::make_pair(metrics, router);
  };
  auto [plain, plain_router] = run("0");
  auto [weighted, weighted_router] = run("0.5");
  REQUIRE(plain.count("train/load_balancing_loss") == 1);
  // E / (k T^2) sum_e P_e T_e: 1 when balanced, at most E / k.
  CHECK(plain.at("train/load_balancing_loss") >= 0.99);
  CHECK(plain.at("train/load_balancing_loss") <= 2.0);
  CHECK(weighted.at("train/load_balancing_loss") ==
        Approx(plain.at("train/load_balancing_loss")).epsilon(1e-6));
  CHECK(weighted.at("train/loss") == Approx(plain.at("train/loss")).epsilon(1e-6));
  CHECK((weighted_router - plain_router).abs().max().item<double>() > 1e-4);

  vime::Model model(micro_qwen3_moe(), at::kFloat, at::kCPU, 7);
  vime::train::SingleRank rank;
  auto recompute = args_of({"--moe-aux-loss-coeff", "0.1", "--recompute-granularity", "full",
                            "--loss-type", "sft_loss"});
  CHECK_THROWS_WITH(
      vime::train::Actor(recompute, model, nullptr, rank),
      Catch::Contains("--moe-aux-loss-coeff") && Catch::Contains("--recompute-granularity"));
}

// GLM-4.5's routing: the routers and experts train; the fp32 correction bias stays as loaded.
TEST_CASE("a sigmoid-routed MoE trains its router but not its correction bias", "[train]") {
  auto c = micro_qwen3_moe();
  c.model_type = "glm4_moe";
  c.qk_norm = false;
  c.partial_rotary_factor = 0.5;
  c.moe.num_experts = 8;
  c.moe.num_experts_per_tok = 2;
  c.moe.score_function = "sigmoid";
  c.moe.expert_bias = true;
  c.moe.n_group = 4;
  c.moe.topk_group = 2;
  c.moe.routed_scaling_factor = 2.5;
  c.moe.shared_expert_intermediate_size = 16;
  c.moe.shared_expert_gated = false;
  c.moe.first_k_dense_replace = 1;
  vime::Model model(c, at::kFloat, at::kCPU, 7);
  auto find = [&](const std::string& name) {
    for (const auto& [n, t] : model.named_parameters())
      if (n == name) return t;
    FAIL("no parameter " << name);
    return at::Tensor();
  };
  const std::string router = "model.layers.1.mlp.gate.weight",
                    bias = "model.layers.1.mlp.gate.e_score_correction_bias";
  find(bias).copy_(at::linspace(-0.2, 0.2, 8));
  const auto router_before = find(router).detach().clone(), bias_before = find(bias).clone();
  auto args = args_of({"--loss-type", "sft_loss", "--lr", "1e-2", "--lr-decay-style", "constant",
                       "--global-batch-size", "4", "--micro-batch-size", "2"});
  vime::train::SingleRank rank;
  vime::train::Actor actor(args, model, nullptr, rank);
  auto metrics = actor.train(0, sft_batch());
  CHECK(std::isfinite(metrics.at("train/loss")));
  CHECK((find(router) - router_before).abs().max().item<double>() > 1e-4);
  CHECK(find(bias).scalar_type() == at::kFloat);
  CHECK(find(bias).equal(bias_before));
  CHECK_FALSE(find(bias).requires_grad());
}
