// `vime train` honours slime's trainer flags, each checked against what an ignored
// flag would leave: frozen parameters stay bit-identical while the others move, the reference
// model follows the actor every --ref-update-interval, Adam restarts under
// --reset-optimizer-states, the critic trains alone for --num-critic-only-steps and is saved and
// resumed, --save-hf writes a loadable HF directory; flags vime cannot honour are refused by name.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/model_presets.hpp"
#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "support/outside_reader.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"
#include "vime/loop/critic_checkpoint.hpp"
#include "vime/loop/trainer_schedule.hpp"
#include "vime/train/rank_reducer.hpp"

namespace fs = std::filesystem;
using vime::test::run_vime;

namespace {

const fs::path& task_dir() { return vime::test::tiny_arith_task(); }

std::string grpo_flags() { return vime::test::tiny_grpo_flags("1e-3"); }

std::map<std::string, at::Tensor> tensors_of(const fs::path& dir) {
  std::map<std::string, at::Tensor> out;
  for (auto& [name, t] : vime::ckpt::read_safetensors_dir(dir)) out[name] = t;
  return out;
}

// Names of the parameters whose saved value differs from the starting model's.
std::map<std::string, bool> moved(const fs::path& iter_dir) {
  auto before = tensors_of(task_dir() / "model");
  auto after = tensors_of(iter_dir / "model");
  std::map<std::string, bool> out;
  for (const auto& [name, t] : before) {
    if (after.count(name) == 0 || after[name].sizes() != t.sizes()) continue;
    out[name] = !at::equal(after[name].to(at::kFloat), t.to(at::kFloat));
  }
  return out;
}

int64_t optimizer_steps(const fs::path& iter_dir) {
  return vime::Json::parse(vime::read_text_file(iter_dir / "state.json"))
      .at("optimizer_steps")
      .as_int();
}

}  // namespace

TEST_CASE("vime train: frozen parameters stay bit-identical, the others move", "[trainer_flags]") {
  vime::test::TempDir run;
  const auto save = run.path() / "ckpt";
  auto r = run_vime("train " + grpo_flags() + "--num-rollout 1 --save-interval 1 --save " +
                    save.string() + " --freeze-params-name-list \"layers\\.0\\.\" embed_tokens");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = moved(save / "iter_0000000");
  REQUIRE(m.size() > 10);
  int frozen = 0, trained_moved = 0;
  for (const auto& [name, did_move] : m) {
    INFO(name);
    if (name.find("layers.0.") != std::string::npos ||
        name.find("embed_tokens") != std::string::npos) {
      ++frozen;
      CHECK_FALSE(did_move);
    } else if (did_move) {
      ++trained_moved;
    }
  }
  CHECK(frozen > 3);
  CHECK(trained_moved > 3);

  const auto only = run.path() / "only";
  auto o = run_vime("train " + grpo_flags() + "--num-rollout 1 --save-interval 1 --save " +
                    only.string() + " --only-train-params-name-list mlp");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  for (const auto& [name, did_move] : moved(only / "iter_0000000")) {
    INFO(name);
    if (name.find("mlp") == std::string::npos) CHECK_FALSE(did_move);
    if (name.find("mlp.down_proj") != std::string::npos) CHECK(did_move);
  }
}

TEST_CASE("vime train: --reset-optimizer-states restarts Adam at every rollout",
          "[trainer_flags]") {
  vime::test::TempDir run;
  for (bool reset : {false, true}) {
    const auto save = run.path() / (reset ? "reset" : "kept");
    auto r = run_vime("train " + grpo_flags() + "--num-rollout 2 --save-interval 1 --save " +
                      save.string() + (reset ? " --reset-optimizer-states" : ""));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    // One step per rollout: Adam's step count says whether its state survived rollout 0.
    CHECK(optimizer_steps(save / "iter_0000001") == (reset ? 1 : 2));
  }
}

TEST_CASE("vime train: --ref-update-interval copies the actor into the reference model",
          "[trainer_flags]") {
  vime::test::TempDir run;
  std::map<bool, double> gap;  // |old − ref| log-prob means at rollout 1
  for (bool update : {false, true}) {
    const auto metrics = run.path() / (update ? "updated.jsonl" : "fixed.jsonl");
    auto r = run_vime("train " + grpo_flags() +
                      "--num-rollout 2 --use-kl-loss --kl-loss-coef 0.01 --entropy-coef 0.1 "
                      "--metrics-jsonl " +
                      metrics.string() + (update ? " --ref-update-interval 1" : ""));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto m = vime::test::read_metrics(metrics);
    REQUIRE(m["rollout/log_probs"].size() == 2);
    REQUIRE(m["rollout/ref_log_probs"].size() == 2);
    gap[update] = std::abs(m["rollout/log_probs"][1] - m["rollout/ref_log_probs"][1]);
  }
  CHECK(gap[true] < 1e-5);   // the reference is the actor that generated rollout 1
  CHECK(gap[false] > 1e-4);  // the reference stayed at the starting model
}

TEST_CASE("vime train: the critic trains alone for --num-critic-only-steps, saved and resumed",
          "[trainer_flags]") {
  vime::test::TempDir run;
  const auto save = run.path() / "ckpt";
  const auto metrics = run.path() / "metrics.jsonl";
  const std::string ppo = "--advantage-estimator ppo --num-critic-only-steps 1 ";
  auto r = run_vime("train " + grpo_flags() + ppo + "--num-rollout 2 --save-interval 1 --save " +
                    save.string() + " --metrics-jsonl " + metrics.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = vime::test::read_metrics(metrics);
  CHECK(m["train/critic-value_loss"].size() == 2);
  CHECK(m["train/pg_loss"].size() == 1);  // the actor trained on rollout 1 only
  bool any_moved_at_0 = false, any_moved_at_1 = false;
  for (const auto& [name, did_move] : moved(save / "iter_0000000")) any_moved_at_0 |= did_move;
  for (const auto& [name, did_move] : moved(save / "iter_0000001")) any_moved_at_1 |= did_move;
  CHECK_FALSE(any_moved_at_0);
  CHECK(any_moved_at_1);
  for (const char* iter : {"iter_0000000", "iter_0000001"}) {
    CHECK(fs::exists(save / "critic" / iter / "model" / "model.safetensors"));
    CHECK(fs::exists(save / "critic" / iter / "value_head.safetensors"));
  }

  auto resumed = run_vime("train " + grpo_flags() + ppo + "--num-rollout 3 --load " +
                          save.string() + " --save " + save.string() + " --save-interval 1");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.output, Catch::Contains("rollouts 2..2"));
  CHECK_THAT(resumed.output, !Catch::Contains("the critic starts afresh"));
}

TEST_CASE("the critic's fresh value head has the spread --init-method-std sets",
          "[trainer_flags]") {
  vime::train::SingleRank rank;
  vime::Model trunk(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 7);
  auto std_of = [&](std::vector<std::string> tokens) {
    tokens.insert(tokens.end(), {"--advantage-estimator", "ppo"});
    vime::train::Critic critic(vime::core::parse_args(tokens), trunk, rank, 11);
    return critic.value_head().to(at::kDouble).std().item<double>();
  };
  const double by_default = std_of({}), wide = std_of({"--init-method-std", "0.2"});
  CHECK(by_default == Approx(0.02).epsilon(0.3));        // Megatron's default; a sample of `hidden`
  CHECK(wide == Approx(10 * by_default).epsilon(1e-4));  // the same draws, scaled
}

TEST_CASE("the critic's checkpoint round-trips trunk, value head and step counts",
          "[trainer_flags]") {
  vime::test::TempDir dir;
  const std::vector<std::string> tokens = {"--advantage-estimator", "ppo"};
  auto args = vime::core::parse_args(tokens);
  vime::train::SingleRank rank;
  vime::Model trunk(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 7);
  vime::train::Critic critic(args, trunk, rank, 11);
  critic.lr_scheduler().step(3);
  vime::loop::save_critic(dir.path(), 5, critic, trunk, true);

  vime::Model other_trunk(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 8);
  vime::train::Critic other(args, other_trunk, rank, 12);
  REQUIRE_FALSE(at::equal(other.value_head(), critic.value_head()));
  const auto actor_iter = dir.path() / vime::ckpt::iteration_dir_name(5);
  REQUIRE(vime::loop::load_critic(actor_iter, 5, other, other_trunk, true));
  CHECK(at::equal(other.value_head(), critic.value_head()));
  CHECK(at::equal(other_trunk.named_parameters()[0].second, trunk.named_parameters()[0].second));
  CHECK(other.lr_scheduler().num_steps() == 3);
  CHECK_FALSE(vime::loop::load_critic(actor_iter, 6, other, other_trunk, true));
}

TEST_CASE("vime train: --save-hf writes a loadable HF directory at each save", "[trainer_flags]") {
  vime::test::TempDir run;
  const auto save = run.path() / "ckpt";
  const auto hf = run.path() / "hf" / "rollout_{rollout_id}";
  auto r = run_vime("train " + grpo_flags() + "--num-rollout 2 --save-interval 1 --save " +
                    save.string() + " --save-hf " + hf.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (int id : {0, 1}) {
    const auto dir = run.path() / "hf" / ("rollout_" + std::to_string(id));
    REQUIRE(vime::ckpt::is_hf_dir(dir));
    CHECK(fs::exists(dir / "tokenizer.json"));
    auto hf_model = vime::ckpt::load_hf_model(dir, at::kFloat, at::kCPU);
    auto iter = vime::ckpt::resolve_checkpoint(save, id);
    REQUIRE(iter.has_value());
    auto saved = vime::ckpt::load_model(*iter, at::kFloat, at::kCPU);
    const auto& a = hf_model->named_parameters();
    const auto& b = saved->named_parameters();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      INFO(a[i].first);
      CHECK(at::equal(a[i].second, b[i].second));
    }
    // A reader that shares no code with vime gets the trained checkpoint's logits from the copy.
    if (const auto missing = vime::test::outside_reader_missing(); !missing.empty()) {
      WARN("outside reader skipped: " << missing);
    } else {
      const std::vector<std::vector<int64_t>> seqs{{16, 17, 18, 10, 19}, {20, 21, 22}};
      at::NoGradGuard no_grad;
      const auto expected = saved->forward(vime::PackedBatch::pack(seqs, at::kCPU))
                                .narrow(-1, 0, saved->config().vocab_size);
      const auto got = vime::test::outside_reader_logits(dir, seqs);
      REQUIRE(got.sizes() == expected.sizes());
      CHECK((got - expected).abs().max().item<double>() < 1e-4);
    }
  }
  // The copy is a model `vime train` starts from.
  auto again = run_vime("train " + grpo_flags() +
                        "--num-rollout 1 --debug-rollout-only "
                        "--hf-checkpoint " +
                        (run.path() / "hf" / "rollout_1").string());
  INFO(again.output);
  CHECK(again.exit_code == 0);
}

TEST_CASE("vime train: --use-opd with an in-trainer teacher shifts the advantages",
          "[trainer_flags]") {
  vime::test::TempDir teacher;  // the task's architecture with other random weights
  auto made = vime::test::run_command(
      std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " + teacher.path().string() +
      " --num-train 16 --num-test 4 --hidden-size 64 --num-layers 2 --head-dim 16"
      " --intermediate-size 128 --model-seed 99");
  REQUIRE(made.exit_code == 0);
  vime::test::TempDir run;
  std::map<bool, std::map<std::string, std::vector<double>>> m;
  for (bool opd : {false, true}) {
    const auto metrics = run.path() / (opd ? "opd.jsonl" : "plain.jsonl");
    auto r =
        run_vime("train " + grpo_flags() + "--num-rollout 1 --metrics-jsonl " + metrics.string() +
                 (opd ? " --use-opd --opd-type megatron --opd-kl-coef 1 --opd-teacher-load " +
                            (teacher.path() / "model").string()
                      : std::string()));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    m[opd] = vime::test::read_metrics(metrics);
  }
  REQUIRE(m[true]["rollout/teacher_log_probs"].size() == 1);
  const double student = m[true]["rollout/log_probs"].at(0);
  const double teacher_lp = m[true]["rollout/teacher_log_probs"].at(0);
  // Another model: both are near uniform over the vocabulary, so their mean log-probs differ by
  // ~1e-3 (measured 9.6e-4 .. 2e-3), where the same model would give 0.
  CHECK(std::abs(student - teacher_lp) > 1e-4);
  // The same rollout 0 (same seed, same starting actor): masked means are linear, so the OPD run's
  // mean advantage is the plain one minus (student − teacher).
  CHECK(m[true]["rollout/advantages"].at(0) ==
        Approx(m[false]["rollout/advantages"].at(0) - (student - teacher_lp)).margin(1e-4));

  auto served = run_vime("train " + grpo_flags() + "--num-rollout 1 --use-opd --opd-type vllm");
  INFO(served.output);
  CHECK(served.exit_code != 0);
  CHECK_THAT(served.output, Catch::Contains("no teacher log-probs"));
}

TEST_CASE("vime train: flags vime cannot honour are refused by name", "[trainer_flags]") {
  for (const std::string& flags :
       {std::string("--keep-old-actor"), std::string("--rollout-top-p 0.9"),
        std::string("--custom-model-provider-path x.so"),
        std::string("--megatron-config-path m.yaml"), std::string("--use-rollout-entropy"),
        std::string("--balance-by-flops")}) {
    auto r = run_vime("train " + grpo_flags() + "--num-rollout 1 " + flags);
    INFO(flags << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(flags.substr(0, flags.find(' '))) &&
                             Catch::Contains("not supported yet"));
  }
}

// LoRA end to end: GRPO (with a KL loss against the base), PPO's actor (the critic in full), OPD
// and SFT train the adapters alone; the checkpoint holds them in PEFT's files and resumes them
// with their optimizer state; what cannot apply is refused by flag.
TEST_CASE("vime train --lora-rank: the adapters train, the base stays, checkpoints resume",
          "[trainer_flags]") {
  vime::test::TempDir run;
  const std::string lora = "--lora-rank 4 --lora-alpha 8 ";
  const auto save = run.path() / "grpo";
  const auto metrics = run.path() / "grpo.jsonl";
  auto r = run_vime("train " + grpo_flags() + lora +
                    "--use-kl-loss --kl-loss-coef 0.1 --num-rollout 1 --save-interval 1 --save " +
                    save.string() + " --metrics-jsonl " + metrics.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const auto& [name, did_move] : moved(save / "iter_0000000")) {
    INFO(name);
    CHECK_FALSE(did_move);  // the base is frozen
  }
  const auto adapter = save / "iter_0000000" / "adapter";
  REQUIRE(fs::exists(adapter / "adapter_config.json"));
  auto b = tensors_of(adapter).at("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight");
  CHECK(b.abs().max().item<double>() > 0);  // B left zero: one step moved it
  auto m = vime::test::read_metrics(metrics);
  // Rollout 0: the adapters are fresh (B = 0), so the reference (the base) scores what the
  // engine sampled as the engine did.
  REQUIRE(m["rollout/ref_log_probs"].size() == 1);
  CHECK(m["rollout/ref_log_probs"][0] == Approx(m["rollout/rollout_log_probs"][0]).margin(1e-4));

  auto resumed = run_vime("train " + grpo_flags() + lora + "--num-rollout 2 --load " +
                          save.string() + " --save-interval 1 --save " + save.string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(optimizer_steps(save / "iter_0000001") == 2);
  auto without = run_vime("train " + grpo_flags() + "--num-rollout 3 --load " + save.string());
  CHECK(without.exit_code == 2);
  CHECK_THAT(without.output, Catch::Contains("--lora-rank 4"));

  const auto t = task_dir().string();
  // convert-hf: the adapter alone in PEFT's files, which --load starts a run from (on the
  // --ref-load base), or the merged model.
  const auto peft = run.path() / "peft";
  auto c = run_vime("convert-hf --input-dir " + save.string() + " --output-dir " + peft.string() +
                    " --origin-hf-dir " + t + "/model");
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  CHECK(tensors_of(peft).size() == 2 * 7 * 2);  // A and B of 7 linears in 2 layers
  auto from_peft =
      run_vime("train " + grpo_flags() + lora + "--num-rollout 1 --load " + peft.string());
  INFO(from_peft.output);
  CHECK(from_peft.exit_code == 0);
  CHECK_THAT(from_peft.output, Catch::Contains("weights from " + peft.string()));
  const auto merged = run.path() / "merged";
  auto mc = run_vime("convert-hf --merge-lora --input-dir " + save.string() + " --output-dir " +
                     merged.string() + " --origin-hf-dir " + t + "/model");
  REQUIRE(mc.exit_code == 0);
  const auto base = tensors_of(task_dir() / "model");
  const auto merged_tensors = tensors_of(merged);
  CHECK_FALSE(at::equal(merged_tensors.at("model.layers.1.mlp.down_proj.weight"),
                        base.at("model.layers.1.mlp.down_proj.weight")));
  CHECK(at::equal(merged_tensors.at("model.norm.weight"), base.at("model.norm.weight")));
  for (const std::string& variant :
       {std::string("--advantage-estimator ppo"),
        "--use-opd --opd-type megatron --opd-kl-coef 1 --opd-teacher-load " + t + "/model",
        "--rollout-function-path sft --loss-type sft_loss --disable-compute-advantages-and-returns "
        "--prompt-data " +
            t + "/data/sft.jsonl"}) {
    INFO(variant);
    const auto dir = run.path() / std::to_string(std::hash<std::string>()(variant));
    auto v = run_vime("train " + grpo_flags() + lora + variant +
                      " --num-rollout 1 --save-interval 1 --save " + dir.string());
    INFO(v.output);
    CHECK(v.exit_code == 0);
    CHECK(fs::exists(dir / "iter_0000000" / "adapter" / "adapter_model.safetensors"));
  }
  auto refused =
      run_vime("train " + grpo_flags() + lora + "--num-rollout 1 --ref-update-interval 1");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("--ref-update-interval"));
}
