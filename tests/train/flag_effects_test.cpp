// The trainer-side flags, each against the unchanged behaviour it must differ from:
// --freeze/--only-train-params-name-list, --reset-optimizer-states, the custom advantage plugin's
// "kl", the TIS function under --get-mismatch-metrics alone, and slime's icepop and MIS functions
// named in --custom-tis-function-path.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "common/model_presets.hpp"
#include "support/test_support.hpp"
#include "train/tensor_checks.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/train/advantages.hpp"
#include "vime/train/builtin_tis.hpp"
#include "vime/train/loss.hpp"
#include "vime/train/optimizer.hpp"
#include "vime/train/trainable_params.hpp"

namespace {

using vime::test::check_close;
using vime::test::t;

vime::Args args_of(std::vector<std::string> tokens) { return vime::core::parse_args(tokens); }

at::Tensor f(std::vector<float> v) { return at::tensor(v, at::kFloat); }

// Two samples (3 and 2 response tokens; the first one's last token masked out) whose rollout
// log-probs differ from the trainer's by Δ = train − rollout = (0.1, −0.1, 0.0 | 1.5, −0.05).
struct MismatchCase {
  vime::train::LossBatch batch;
  vime::train::ForwardOutput forward;
  MismatchCase() {
    batch.total_lengths = {5, 3};
    batch.response_lengths = {3, 2};
    batch.rollout_mask_sums = {2, 2};
    batch.loss_masks = f({1, 1, 0, 1, 1});
    batch.advantages = f({1, -1, 2, 0.5, -0.5});
    batch.log_probs = f({-0.5, -1.0, -2.0, -0.2, -0.3});
    batch.rollout_log_probs = f({-0.6, -0.9, -2.0, -1.7, -0.25});
    forward.response.log_probs = f({-0.5, -1.0, -2.0, -0.2, -0.3}).requires_grad_(true);
    forward.response.entropy = f({1.0, 2.0, 3.0, 0.5, 0.25});
  }
};

int tis_calls = 0;
vime::TisOutput counting_tis(const vime::Args&, const vime::TisInputs& in) {
  ++tis_calls;
  vime::TisOutput out;
  out.pg_loss = in.pg_loss;
  out.loss_masks = in.loss_masks;
  out.metrics["seen"] = in.loss_masks;
  return out;
}

std::vector<at::Tensor> seen_kl;
void advantage_reading_kl(const vime::Args&, vime::RolloutData& rd) {
  seen_kl = rd.count("kl") ? rd.at("kl") : std::vector<at::Tensor>{};
  rd["advantages"] = rd.at("loss_masks");
}

}  // namespace

TEST_CASE("--freeze-params-name-list and --only-train-params-name-list pick what trains",
          "[train_flags]") {
  vime::Model model(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 7);
  const size_t all = model.named_parameters().size();
  auto frozen = vime::train::trainable_parameters(
      model, args_of({"--freeze-params-name-list", "embed_tokens", "layers\\.0\\."}));
  CHECK(frozen.size() < all);
  for (const auto& [name, p] : model.named_parameters()) {
    const bool is_frozen = name.find("embed_tokens") != std::string::npos ||
                           name.find("layers.0.") != std::string::npos;
    INFO(name);
    CHECK(p.requires_grad() == !is_frozen);
  }
  for (const auto& [name, p] : frozen) CHECK(name.find("layers.0.") == std::string::npos);

  vime::Model other(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 7);
  auto only =
      vime::train::trainable_parameters(other, args_of({"--only-train-params-name-list", "mlp"}));
  REQUIRE_FALSE(only.empty());
  for (const auto& [name, p] : only) CHECK(name.find("mlp") != std::string::npos);
  CHECK_THROWS_WITH(vime::train::trainable_parameters(
                        other, args_of({"--only-train-params-name-list", "no_such_name"})),
                    Catch::Contains("--only-train-params-name-list leaves no parameter"));
  CHECK_THROWS_WITH(
      vime::train::trainable_parameters(other, args_of({"--freeze-params-name-list", "(unclosed"})),
      Catch::Contains("--freeze-params-name-list"));
}

TEST_CASE("Optimizer::reset_states: Adam starts afresh, the weights stay", "[train_flags]") {
  auto run = [](bool reset) {
    auto w = at::ones({4}, at::kFloat).requires_grad_(true);
    vime::Optimizer opt({{"w", w}}, vime::OptimizerConfig{});
    for (int step = 0; step < 3; ++step) {
      if (step == 2 && reset) opt.reset_states();
      w.mutable_grad() = at::full({4}, step == 2 ? -1.0 : 1.0);
      opt.accumulate_grads();
      opt.step(0.1);
    }
    return std::make_pair(w.detach().clone(), opt.num_steps());
  };
  auto [kept, kept_steps] = run(false);
  auto [reset, reset_steps] = run(true);
  CHECK(kept_steps == 3);
  CHECK(reset_steps == 1);
  // Fresh Adam moves by exactly lr against the new gradient's sign; the kept momentum does not.
  CHECK(!at::allclose(kept, reset));
}

TEST_CASE("the custom advantage plugin receives slime's \"kl\"", "[train_flags]") {
  vime::train::TrainBatch batch;
  batch.tokens = {{1, 2, 3, 4, 5}, {6, 7, 8}};
  batch.response_lengths = {3, 2};
  batch.rewards = {1.0, -0.5};
  auto data = vime::train::RolloutTensors::from(batch, at::kCPU);
  data.log_probs = {f({-0.5, -1.0, -2.0}), f({-0.2, -0.3})};
  data.ref_log_probs = {f({-0.6, -0.8, -2.5}), f({-0.1, -0.3})};
  vime::train::TrainContext ctx(args_of({"--kl-coef", "0.1", "--kl-loss-type", "k1"}));
  ctx.plugins.custom_advantage = vime::plugin::PluginFunction<vime::PluginKind::kAdvantage>(
      nullptr, &advantage_reading_kl, "test");
  compute_advantages_and_returns(ctx, data);
  REQUIRE(seen_kl.size() == 2);
  check_close(seen_kl[0], {0.1, -0.2, 0.5}, 1e-6);
  vime::train::TrainContext no_kl(args_of({}));
  no_kl.plugins.custom_advantage = ctx.plugins.custom_advantage;
  compute_advantages_and_returns(no_kl, data);
  REQUIRE(seen_kl.size() == 2);
  check_close(seen_kl[1], {0, 0});
}

TEST_CASE("--get-mismatch-metrics alone calls the TIS function; its masks reduce the loss",
          "[train_flags]") {
  MismatchCase c;
  vime::train::TrainContext ctx(args_of({"--get-mismatch-metrics"}));
  ctx.plugins.custom_tis =
      vime::plugin::PluginFunction<vime::PluginKind::kTis>(nullptr, &counting_tis, "test");
  tis_calls = 0;
  auto out = policy_loss_function(ctx, c.batch, c.forward, sum_of_sample_mean(c.batch, false));
  CHECK(tis_calls == 1);
  CHECK(out.metrics.count("seen") == 1);
  vime::train::TrainContext off(args_of({}));
  off.plugins.custom_tis = ctx.plugins.custom_tis;
  policy_loss_function(off, c.batch, c.forward, sum_of_sample_mean(c.batch, false));
  CHECK(tis_calls == 1);
}

TEST_CASE("slime's icepop and MIS functions by name", "[train_flags]") {
  MismatchCase c;
  vime::TisInputs in;
  in.pg_loss = f({1, 1, 1, 1, 1});
  in.train_log_probs = c.batch.split(c.batch.log_probs);
  in.rollout_log_probs = c.batch.split(c.batch.rollout_log_probs);
  in.loss_masks = c.batch.split(c.batch.loss_masks);
  in.total_lengths = c.batch.total_lengths;
  in.response_lengths = c.batch.response_lengths;

  auto icepop_args = args_of({"--use-tis", "--custom-tis-function-path",
                              "slime.backends.megatron_utils.loss.icepop_function",
                              "--tis-clip-low", "0.5", "--tis-clip", "2.0"});
  auto icepop = vime::train::builtin_tis_function(icepop_args);
  REQUIRE(icepop.has_value());
  auto ice = (*icepop)(icepop_args, in);
  // exp(1.5) = 4.48 is outside [0.5, 2]: popped to 0; the others keep their ratio.
  check_close(ice.pg_loss, {std::exp(0.1), std::exp(-0.1), 1.0, 0.0, std::exp(-0.05)}, 1e-5);
  CHECK(ice.metrics.count("tis_clipfrac") == 1);

  vime::test::TempDir dir;
  const auto config = dir.path() / "mis.yaml";
  std::ofstream(config) << "tis_mode: mask\ntis_level: geometric\ntis_upper_bound: 2.0\n"
                           "tis_lower_bound: 0.5\nuse_rs: true\nrs_level: token\n"
                           "rs_veto_threshold: 1.0e-4\ntis_batch_normalize: false\n";
  auto mis_args = args_of(
      {"--use-tis", "--custom-tis-function-path", "mis", "--custom-config-path", config.string()});
  auto mis = vime::train::builtin_tis_function(mis_args);
  REQUIRE(mis.has_value());
  auto out = (*mis)(mis_args, in);
  // Geometric: sample 0 has mean Δ 0 over its two tokens (w = 1), sample 1 mean 0.725 (w = 2.06,
  // outside [0.5, 2]: masked). Token-level RS then masks sample 1's first token (4.48) too.
  check_close(out.pg_loss, {1, 1, 0, std::exp(0.725), std::exp(0.725)}, 1e-4);
  REQUIRE(out.loss_masks.size() == 2);
  check_close(out.loss_masks[0], {1, 1, 0});
  check_close(out.loss_masks[1], {0, 0});
  CHECK(out.metrics.count("mis_kl") == 1);
  CHECK(out.metrics.count("mis_tis_mask_fraction_high") == 1);

  // Without --use-tis: the mismatch metrics only, the loss and masks untouched.
  auto metrics_only = args_of({"--get-mismatch-metrics", "--custom-tis-function-path", "mis"});
  auto only = (*vime::train::builtin_tis_function(metrics_only))(metrics_only, in);
  check_close(only.pg_loss, {1, 1, 1, 1, 1});
  CHECK(only.metrics.count("mis_k3_kl") == 1);
  CHECK(only.metrics.count("mis_tis_weight_before_bound") == 0);

  auto missing = args_of({"--use-tis", "--custom-tis-function-path", "mis"});
  CHECK_THROWS_WITH(vime::train::builtin_tis_function(missing),
                    Catch::Contains("--custom-config-path needs tis_mode"));
  CHECK_FALSE(vime::train::builtin_tis_function(args_of({})).has_value());
}

TEST_CASE("--use-opd moves the advantages toward the teacher after the estimator",
          "[train_flags]") {
  vime::train::TrainBatch batch;
  batch.tokens = {{1, 2, 3, 4, 5}, {6, 7, 8}};
  batch.response_lengths = {3, 2};
  batch.rewards = {1.0, -0.5};
  batch.teacher_log_probs = {{-0.4f, -1.0f, -1.0f}, {-0.2f, -0.1f}};
  auto data = vime::train::RolloutTensors::from(batch, at::kCPU);
  data.log_probs = {f({-0.5, -1.0, -2.0}), f({-0.2, -0.3})};
  vime::train::TrainContext ctx(
      args_of({"--use-opd", "--opd-type", "vllm", "--opd-kl-coef", "0.5"}));
  compute_advantages_and_returns(ctx, data);
  // grpo's A = reward, minus 0.5·(student − teacher).
  check_close(data.advantages[0], {1.05, 1.0, 1.5}, 1e-6);
  check_close(data.advantages[1], {-0.5, -0.4}, 1e-6);

  auto no_teacher = vime::train::RolloutTensors::from(
      [&] {
        auto b = batch;
        b.teacher_log_probs.clear();
        return b;
      }(),
      at::kCPU);
  no_teacher.log_probs = data.log_probs;
  CHECK_THROWS_WITH(compute_advantages_and_returns(ctx, no_teacher),
                    Catch::Contains("no teacher log-probs"));
}
