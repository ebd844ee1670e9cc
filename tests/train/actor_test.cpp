// The actor end to end on CPU with a tiny model: SFT loss falls, GRPO steps run with slime's
// step-0 invariants, bad train data gives clear errors.
#include "vime/train/actor.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "common/model_presets.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/rollout/reward_post_process.hpp"
#include "vime/train/critic.hpp"

namespace {

vime::ModelConfig tiny_config() { return vime::presets::micro_qwen3(); }

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

vime::train::TrainBatch counting_batch(int num_samples) {
  vime::train::TrainBatch b;
  for (int i = 0; i < num_samples; ++i) {
    std::vector<int64_t> seq;
    for (int t = 0; t < 12; ++t) seq.push_back((i + t) % 40);
    b.tokens.push_back(seq);
    b.response_lengths.push_back(6);
    b.rewards.push_back(i % 2 == 0 ? 1.0 : 0.0);
  }
  return b;
}

}  // namespace

TEST_CASE("SFT loss falls on a tiny model", "[train]") {
  vime::Model model(tiny_config(), at::kFloat, at::kCPU, 7);
  auto args = args_of({"--loss-type", "sft_loss", "--lr", "3e-3", "--lr-decay-style", "constant",
                       "--global-batch-size", "4", "--micro-batch-size", "2"});
  vime::train::SingleRank rank;
  vime::train::Actor actor(args, model, nullptr, rank);
  auto batch = counting_batch(4);
  double first = 0, last = 0;
  for (int rollout = 0; rollout < 30; ++rollout) {
    auto m = actor.train(rollout, batch);
    if (rollout == 0) first = m.at("train/loss");
    last = m.at("train/loss");
    CHECK(std::isfinite(m.at("train/grad_norm")));
  }
  CHECK(first > 3.0);  // about ln(40) at random init
  CHECK(last < 0.5 * first);
  CHECK(actor.optimizer().num_steps() == 30);
}

TEST_CASE("GRPO: at rollout 0 actor and reference agree, ppo_kl is 0 and the model moves",
          "[train]") {
  vime::Model model(tiny_config(), at::kFloat, at::kCPU, 7);
  vime::Model ref(tiny_config(), at::kFloat, at::kCPU, 7);
  auto args = args_of({"--advantage-estimator", "grpo", "--n-samples-per-prompt", "4",
                       "--global-batch-size", "2", "--use-kl-loss", "--kl-loss-coef", "0.01",
                       "--kl-loss-type", "low_var_kl", "--lr", "1e-3", "--eps-clip-high", "0.28",
                       "--max-tokens-per-gpu", "30", "--use-dynamic-batch-size"});
  vime::train::SingleRank rank;
  vime::train::Actor actor(args, model, &ref, rank);
  auto batch = counting_batch(4);
  // The actor takes post-processed rewards: grpo's group normalisation, as the rollout does it.
  batch.rewards = vime::rollout::normalize_group_rewards(batch.rewards, 4, true);
  auto actor_lp = actor.compute_log_probs(model, batch);
  auto ref_lp = actor.compute_log_probs(ref, batch);
  for (size_t i = 0; i < actor_lp.size(); ++i) CHECK(actor_lp[i].equal(ref_lp[i]));
  auto before = model.named_parameters()[1].second.clone();
  auto m = actor.train(0, batch);
  REQUIRE(actor.step_metrics().size() == 2);
  CHECK(actor.step_metrics()[0].at("train/ppo_kl") == Approx(0.0).margin(1e-7));  // old == new
  CHECK(std::abs(actor.step_metrics()[1].at("train/ppo_kl")) > 1e-6);             // the model moved
  CHECK(m.at("train/kl_loss") >= 0.0);
  CHECK(m.count("train/pg_clipfrac") == 1);
  CHECK(actor.optimizer().num_steps() == 2);  // 4 samples / gbs 2
  CHECK_FALSE(model.named_parameters()[1].second.equal(before));
}

TEST_CASE("a step's loss metrics sum its micro-batches' sample means, as slime reduces them",
          "[train]") {
  // Responses of 3..6 tokens in micro-batches of 3 + 1 samples: a mean over micro-batches, or
  // per-token instead of per-sample means, would give other numbers.
  auto batch = counting_batch(4);
  for (int i = 0; i < 4; ++i) batch.response_lengths[i] = 3 + i;
  for (const bool per_token : {false, true}) {
    CAPTURE(per_token);
    vime::Model model(tiny_config(), at::kFloat, at::kCPU, 7);
    std::vector<std::string> flags{"--loss-type", "sft_loss", "--global-batch-size", "4"};
    flags.insert(flags.end(), {"--micro-batch-size", "3"});
    if (per_token) flags.push_back("--calculate-per-token-loss");
    vime::train::SingleRank rank;
    vime::train::Actor actor(args_of(flags), model, nullptr, rank);
    double sample_means = 0, token_sum = 0, tokens = 0;
    for (const auto& lp : actor.compute_log_probs(model, batch)) {
      sample_means += -lp.mean().item<double>();
      token_sum += -lp.sum().item<double>();
      tokens += static_cast<double>(lp.numel());
    }
    const double expected = per_token ? token_sum / tokens : sample_means / 4;
    auto m = actor.train(0, batch);
    REQUIRE(actor.step_metrics().size() == 1);
    CHECK(actor.step_metrics()[0].at("train/loss") == Approx(expected).epsilon(1e-6));
    CHECK(m.at("train/loss") == actor.step_metrics()[0].at("train/loss"));
    CHECK(m.at("train/grad_norm") > 0);
  }
}

TEST_CASE("bad train data names the sample", "[train]") {
  vime::Model model(tiny_config(), at::kFloat, at::kCPU, 7);
  auto args = args_of({"--loss-type", "sft_loss", "--global-batch-size", "1"});
  vime::train::SingleRank rank;
  vime::train::Actor actor(args, model, nullptr, rank);
  auto batch = counting_batch(2);
  batch.response_lengths[1] = 12;
  CHECK_THROWS_WITH(actor.train(0, batch), Catch::Contains("sample 1 has response_length 12"));
  batch = counting_batch(2);
  batch.loss_masks = {{1, 1, 1, 1, 1, 1}, {1, 0}};
  CHECK_THROWS_WITH(actor.train(0, batch), Catch::Contains("sample 1 has a loss_mask of 2"));
}

TEST_CASE("PPO: the critic's values feed GAE and its value loss falls", "[train]") {
  vime::Model actor_model(tiny_config(), at::kFloat, at::kCPU, 7);
  vime::Model critic_trunk(tiny_config(), at::kFloat, at::kCPU, 8);
  auto args = args_of({"--advantage-estimator", "ppo", "--global-batch-size", "4", "--lr", "3e-3",
                       "--lr-decay-style", "constant", "--kl-coef", "0", "--gamma", "1.0",
                       "--lambd", "0.95", "--value-clip", "0.5"});
  vime::train::SingleRank rank;
  vime::train::Actor actor(args, actor_model, nullptr, rank);
  vime::train::Critic critic(args, critic_trunk, rank);
  auto batch = counting_batch(4);
  double first = 0, last = 0;
  for (int rollout = 0; rollout < 15; ++rollout) {
    auto old_values = critic.compute_values(batch);
    REQUIRE(old_values[0].numel() == 6);
    batch.values = old_values;
    actor.train(rollout, batch);
    // returns = A + V, with R at the last position and γ = 1: returns[-1] = R.
    CHECK(actor.returns()[0][-1].item<double>() == Approx(batch.rewards[0]).margin(1e-5));
    auto m = critic.train(batch, old_values, actor.returns());
    (rollout == 0 ? first : last) = m.at("critic/value_loss");
  }
  CHECK(last < 0.5 * first);
}

TEST_CASE("a custom loss from a real .so plugin trains like the built-in SFT loss", "[train]") {
  auto batch = counting_batch(4);
  auto run = [&](std::vector<std::string> flags) {
    vime::Model model(tiny_config(), at::kFloat, at::kCPU, 7);
    flags.insert(flags.end(), {"--global-batch-size", "4", "--micro-batch-size", "2"});
    auto args = args_of(flags);
    vime::train::SingleRank rank;
    vime::train::Actor actor(args, model, nullptr, rank);
    vime::train::Metrics last;
    for (int rollout = 0; rollout < 3; ++rollout) last = actor.train(rollout, batch);
    return last;
  };
  auto builtin = run({"--loss-type", "sft_loss"});
  auto custom = run({"--loss-type", "custom_loss", "--custom-loss-function-path",
                     vime::test::plugin_path("train_hooks")});
  CHECK(custom.at("train/loss") == Approx(builtin.at("train/loss")).epsilon(1e-5));
  CHECK(custom.count("train/custom_calls") == 1);
  CHECK_THROWS_WITH(run({"--loss-type", "custom_loss"}),
                    Catch::Contains("--custom-loss-function-path"));
}
