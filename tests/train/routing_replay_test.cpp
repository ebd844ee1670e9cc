// Routing replay on a micro Qwen3-MoE loop on the CPU: the embedded engine generates with its
// routed experts, the trainer's model then differs from the rollout's by a router update (the
// off-policy case), so that the trainer alone routes some tokens elsewhere; with
// --use-rollout-routing-replay it replays the engine's routing and
// train/train_rollout_logprob_abs_diff drops. --use-routing-replay replays the old-policy
// forward's own routing in training. A replayed forward equals a routed one when the replay is
// the routed choice.
#include "vime/train/routing_replay.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>

#include "engine/engine_fixtures.hpp"
#include "support/micro_moe.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/train/actor.hpp"
#include "vime/train/rank_reducer.hpp"

namespace {

using vime::train::TrainBatch;

constexpr uint64_t kSeed = 7;

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

// 8 samples (4 prompts x 2) from the embedded engine with their routed experts.
TrainBatch rollout(vime::Model& model) {
  vime::engine::NativeEngine engine(model, nullptr, {});
  TrainBatch b;
  for (int i = 0; i < 8; ++i) {
    std::vector<int32_t> prompt;
    for (int t = 0; t < 6; ++t) prompt.push_back((5 * (i / 2) + 7 * t + 1) % 40);
    auto request = vime::test::make_request(prompt, 10, 1.0, 100 + i);
    request.return_routed_experts = true;
    const auto r = engine.generate(request);
    std::vector<int64_t> tokens(prompt.begin(), prompt.end());
    tokens.insert(tokens.end(), r.output_ids.begin(), r.output_ids.end());
    b.tokens.push_back(tokens);
    b.response_lengths.push_back(static_cast<int64_t>(r.output_ids.size()));
    b.rewards.push_back(i % 2 == 0 ? 1.0 : -1.0);
    b.loss_masks.emplace_back();
    b.rollout_log_probs.push_back(r.output_log_probs);
    b.rollout_routed_experts.push_back(r.routed_experts);
  }
  return b;
}

// The rollout model after an update of its routers (the trainer's weights).
std::unique_ptr<vime::Model> updated_model() {
  auto m =
      std::make_unique<vime::Model>(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, kSeed);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  at::NoGradGuard no_grad;
  for (auto& [name, p] : m->named_parameters()) {
    if (!name.ends_with("mlp.gate.weight")) continue;
    p.add_(at::normal(0.0, 1.0, p.sizes(), gen, p.options()) * (0.05 * p.std().item<double>()));
  }
  return m;
}

// Positions (of every sample's tokens but the last) whose experts `model` chooses differently
// from the engine's record.
int64_t rerouted_positions(vime::Model& model, const TrainBatch& b) {
  int64_t differ = 0;
  const int64_t width = 2 * 2;
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<int32_t> tokens(b.tokens[i].begin(), b.tokens[i].end() - 1);
    const auto own = vime::test::full_forward_routing(model, tokens);
    const auto& engine = b.rollout_routed_experts[i];
    REQUIRE(own.size() == engine.size());
    for (size_t r = 0; r < own.size(); r += width)
      differ += !std::equal(own.begin() + r, own.begin() + r + width, engine.begin() + r);
  }
  return differ;
}

// One train() of the updated model on `batch`; the actor (and its model) live on for inspection.
struct Trained {
  std::unique_ptr<vime::Args> args;  // the actor keeps a reference
  std::unique_ptr<vime::Model> model;
  std::unique_ptr<vime::train::Actor> actor;
  vime::train::Metrics metrics;
  const vime::train::RoutingReplay& replay() const {
    REQUIRE(actor->routing_replay() != nullptr);
    return *actor->routing_replay();
  }
};

Trained train_once(const TrainBatch& batch, const std::vector<std::string>& extra) {
  std::vector<std::string> tokens{"--advantage-estimator",
                                  "grpo",
                                  "--n-samples-per-prompt",
                                  "2",
                                  "--global-batch-size",
                                  "8",
                                  "--micro-batch-size",
                                  "4",
                                  "--lr",
                                  "1e-6",
                                  "--lr-decay-style",
                                  "constant"};
  tokens.insert(tokens.end(), extra.begin(), extra.end());
  static vime::train::SingleRank rank;
  Trained t;
  t.args = std::make_unique<vime::Args>(args_of(tokens));
  t.model = updated_model();
  t.actor = std::make_unique<vime::train::Actor>(*t.args, *t.model, nullptr, rank);
  t.metrics = t.actor->train(0, batch);
  return t;
}

// Rows of [rows, layers, k] routings that differ.
int64_t differing_rows(const at::Tensor& a, const at::Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  return a.ne(b).flatten(1).any(1).sum().item<int64_t>();
}

}  // namespace

TEST_CASE("--use-rollout-routing-replay replays the engine's routing and lowers the mismatch",
          "[train]") {
  vime::Model rollout_model(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, kSeed);
  const TrainBatch batch = rollout(rollout_model);
  // The engine's own model routes as it recorded; the updated one does not, on some tokens.
  CHECK(rerouted_positions(rollout_model, batch) <= 2);
  auto trainer_model = updated_model();
  const int64_t rerouted = rerouted_positions(*trainer_model, batch);
  INFO("positions the updated trainer routes elsewhere: " << rerouted);
  REQUIRE(rerouted >= 5);

  const auto plain = train_once(batch, {});
  const auto replayed = train_once(batch, {"--use-rollout-routing-replay"});
  const double without = plain.metrics.at("train/train_rollout_logprob_abs_diff");
  const double with = replayed.metrics.at("train/train_rollout_logprob_abs_diff");
  INFO("train_rollout_logprob_abs_diff without replay " << without << ", with " << with);
  CHECK(with < 0.25 * without);

  // What the trainer replayed is what the engine recorded (its MoE layers; the last token
  // repeats the row before it).
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& engine = batch.rollout_routed_experts[i];
    const auto rows = static_cast<int64_t>(batch.tokens[i].size()) - 1;
    const auto want = at::tensor(engine, at::TensorOptions().dtype(at::kInt)).view({rows, 2, 2});
    const at::Tensor& got = replayed.replay().sample_routing(static_cast<int64_t>(i));
    REQUIRE(got.size(0) == rows + 1);
    CHECK(got.narrow(0, 0, rows).equal(want));
    CHECK(got[rows].equal(want[rows - 1]));
  }
}

TEST_CASE("--use-routing-replay trains through the old-policy forward's routing", "[train]") {
  vime::Model rollout_model(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, kSeed);
  TrainBatch batch = rollout(rollout_model);
  batch.rollout_routed_experts.clear();  // not read: the trainer records its own
  const auto trained = train_once(batch, {"--use-routing-replay"});
  // The training forward replays the recorded routing of the same weights: the same log-probs.
  CHECK(trained.metrics.at("train/ppo_kl") == Approx(0.0).margin(1e-6));
  // The record is the trainer's own routing (up to a near-tie that packing resolves otherwise).
  auto before_step = updated_model();
  int64_t differ = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    std::vector<int32_t> tokens(batch.tokens[i].begin(), batch.tokens[i].end());
    const auto own = vime::test::full_forward_routing(*before_step, tokens);
    differ += differing_rows(trained.replay().sample_routing(static_cast<int64_t>(i)),
                             at::tensor(own, at::TensorOptions().dtype(at::kInt)).view({-1, 2, 2}));
  }
  CHECK(differ <= 2);
  // Without the rollout's column --use-rollout-routing-replay says what is missing.
  CHECK_THROWS_WITH(train_once(batch, {"--use-rollout-routing-replay"}),
                    Catch::Contains("rollout_routed_experts"));
  batch.rollout_routed_experts.assign(batch.size(), std::vector<int32_t>(3, 0));
  CHECK_THROWS_WITH(train_once(batch, {"--use-rollout-routing-replay"}),
                    Catch::Contains("sample 0") && Catch::Contains("routed expert ids"));
}

TEST_CASE("a replayed forward equals the routed forward whose choice it replays", "[train]") {
  vime::Model model(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, kSeed);
  at::NoGradGuard no_grad;
  const auto packed = vime::PackedBatch::pack({{1, 5, 9, 13, 17, 21}, {2, 4, 8}}, at::kCPU);
  vime::MoeRouting routed;
  at::Tensor free_hidden, replayed_hidden;
  {
    vime::MoeRoutingScope scope(&routed);
    free_hidden = model.forward_hidden(packed);
  }
  REQUIRE(routed.chosen.size() == 2);
  vime::MoeRouting replay;
  replay.replay = routed.chosen;
  {
    vime::MoeRoutingScope scope(&replay);
    replayed_hidden = model.forward_hidden(packed);
  }
  CHECK(replayed_hidden.equal(free_hidden));
  for (size_t l = 0; l < 2; ++l) CHECK(replay.chosen[l].equal(routed.chosen[l]));
  // Another choice changes the output.
  replay = {};
  replay.replay = {routed.chosen[0], (routed.chosen[1] + 1) % 8};
  {
    vime::MoeRoutingScope scope(&replay);
    CHECK(!model.forward_hidden(packed).equal(free_hidden));
  }
}

TEST_CASE("routing replay refuses a dense model", "[train]") {
  vime::Model model(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, kSeed);
  vime::train::SingleRank rank;
  CHECK_THROWS_WITH(vime::train::Actor(args_of({"--use-routing-replay"}), model, nullptr, rank),
                    Catch::Contains("--use-routing-replay") && Catch::Contains("mixture"));
}
