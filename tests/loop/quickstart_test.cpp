// The quickstart (README command (a)) in a cheaper version: scripts/quickstart.sh on the real
// binaries with its default 1,000 SFT steps, evaluated every 500 steps (instead of 100), and 20
// GRPO rollouts (instead of 100). SFT learns from a sloppy teacher and ends below the README's bar
// (0.8 held-out greedy accuracy); GRPO must lift it past the bar, by at least 0.1 (seeds 1-5 at 1
// and 2 threads: tools/results/quickstart_seed_sweep.md). Then the quickstart's GRPO stage again
// from the same SFT checkpoint with the same seed must log the same metrics as the run's first
// rollouts (the embedded engine seeds each sample from --rollout-seed and its index, not from the
// order the rollout's worker threads reach it in). Last, the GRPO stage with LoRA
// (scripts/quickstart_lora.sh: rank 8, alpha 16, lr 1e-3, 20 rollouts) from the same SFT
// checkpoint must lift the held-out accuracy by at least 0.1 too (seed 1: 0.576 -> 0.996).
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "loop/metrics_file.hpp"
#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

namespace {

namespace fs = std::filesystem;

// GRPO rollouts of the test's quickstart run (the script's default is 100), and of the run that
// repeats its start.
constexpr size_t kGrpoRollouts = 20;
constexpr size_t kRepeatRollouts = 3;

// Mean raw_reward of `vime eval`'s per-sample output: the held-out greedy accuracy.
double eval_accuracy(const fs::path& samples) {
  std::istringstream lines(vime::read_text_file(samples));
  double correct = 0, total = 0;
  for (std::string line; std::getline(lines, line); total += 1)
    correct += vime::Json::parse(line).at("raw_reward").as_double();
  return total > 0 ? correct / total : 0.0;
}

// The quickstart's GRPO stage again (scripts/quickstart.sh's flags; no evaluation before training,
// which changes no training state), for `rollouts` rollouts.
vime::test::CommandResult grpo_again(const fs::path& run, const fs::path& out, int rollouts) {
  const std::string task = (run / "task").string(), sft = (run / "sft").string();
  return vime::test::run_vime("train --config " VIME_SOURCE_DIR
                              "/examples/quickstart/grpo.yaml --seed 1 --rollout-seed 1 "
                              "--hf-checkpoint " +
                              task + "/model --load " + sft + " --finetune --ref-load " + sft +
                              " --prompt-data " + task + "/data/train.jsonl --num-rollout " +
                              std::to_string(rollouts) + " --eval-prompt-data arith " + task +
                              "/data/test.jsonl --skip-eval-before-train --metrics-jsonl " +
                              (out / "metrics.jsonl").string());
}

}  // namespace

TEST_CASE("the quickstart: GRPO lifts SFT's accuracy past the bar, and its run repeats exactly",
          "[quickstart]") {
  vime::test::TempDir dir;
  const auto out = dir.path() / "run";
  auto r = vime::test::run_command(
      "cd " VIME_SOURCE_DIR " && QUICKSTART_SKIP_BUILD=1 VIME_BIN_DIR=" VIME_BUILD_DIR
      "/bin QUICKSTART_SFT_EVAL_INTERVAL=500 QUICKSTART_GRPO_ROLLOUTS=" +
      std::to_string(kGrpoRollouts) + " QUICKSTART_OUT=" + out.string() +
      " bash scripts/quickstart.sh");
  INFO(r.output.substr(r.output.size() > 6000 ? r.output.size() - 6000 : 0));
  REQUIRE(r.exit_code == 0);
  auto sft = vime::test::read_metrics(out / "sft_metrics.jsonl");
  const auto& evals = sft["eval/arith"];
  REQUIRE(evals.size() == 3);   // steps 0, 500, 1000
  CHECK(evals.front() == 0.0);  // the random model never even closes \boxed{}
  REQUIRE(sft["train/loss"].size() == 1000);
  auto grpo_metrics = vime::test::read_metrics(out / "grpo_metrics.jsonl");
  REQUIRE(grpo_metrics["rollout/raw_reward"].size() == kGrpoRollouts);
  for (double d : grpo_metrics["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(fs::exists(out / "tensorboard"));
  // SFT learned the working and the sums, but from a teacher that boxes its working unreversed on
  // 70% of the sums of 100 and more, so its greedy answers to those are wrong: below the bar.
  const double after_sft = evals.back();
  CHECK(after_sft >= 0.4);
  CHECK(after_sft < 0.8);
  // vime eval on the 500 held-out problems, greedy, after GRPO on the right sums: the README's bar,
  // reached by GRPO.
  CHECK(vime::test::count_lines(vime::read_text_file(out / "eval_samples.jsonl")) == 500);
  const double after_grpo = eval_accuracy(out / "eval_samples.jsonl");
  CHECK(after_grpo >= 0.8);
  CHECK(after_grpo >= after_sft + 0.1);
  CHECK_THAT(r.output, Catch::Contains("after SFT") && Catch::Contains("after GRPO"));

  // The quickstart's GRPO stage again from the same SFT checkpoint, same seed: its first rollouts
  // repeat the run's samples, rewards, losses and gradients. Only the engine's own log-probs may
  // differ in the last float bits: its batches are made of the requests that reached it by then,
  // and a GEMM's rounding depends on the number of rows (the trainer recomputes the log-probs it
  // trains on).
  const auto again_out = dir.path() / "again";
  auto g = grpo_again(out, again_out, kRepeatRollouts);
  INFO(g.output.substr(g.output.size() > 4000 ? g.output.size() - 4000 : 0));
  REQUIRE(g.exit_code == 0);
  auto again = vime::test::read_metrics(again_out / "metrics.jsonl");
  REQUIRE(again["rollout/raw_reward"].size() == kRepeatRollouts);
  REQUIRE(again["train/loss"].size() == kRepeatRollouts);
  double rewards = 0;
  for (double v : again["rollout/raw_reward"]) rewards += v;
  CHECK(rewards > 0);  // the comparison covers real policy-gradient steps
  for (const auto& [key, values] : again) {
    // Timing; how much of each prompt the prefix cache held when its request arrived (arrival
    // order decides it; the tokens sampled do not depend on it); the engine's own counts (on the
    // CPU its cache grows with the run's history); and evaluations, which the two runs make at
    // different steps.
    if (key.rfind("perf/", 0) == 0 || key.rfind("eval/", 0) == 0 || key == "_timestamp" ||
        key == "rollout/avg_cached_tokens_per_sample" || key == "rollout/prefix_cache_hit_rate" ||
        key.rfind("rollout/engine_", 0) == 0)
      continue;
    INFO(key);
    const auto& first = grpo_metrics[key];
    REQUIRE(first.size() >= values.size());
    const bool engine_logprobs =
        key == "rollout/rollout_log_probs" || key == "train/train_rollout_logprob_abs_diff";
    for (size_t k = 0; k < values.size(); ++k) {
      if (engine_logprobs)
        CHECK(std::abs(values[k] - first[k]) <= 1e-6);
      else
        CHECK(values[k] == first[k]);
    }
  }

  // GRPO with LoRA adapters (the base frozen, the reference the base) from the same checkpoint.
  const auto lora_out = dir.path() / "lora";
  auto l = vime::test::run_command("cd " VIME_SOURCE_DIR " && VIME_BIN_DIR=" VIME_BUILD_DIR
                                   "/bin QUICKSTART_OUT=" +
                                   out.string() + " QUICKSTART_LORA_OUT=" + lora_out.string() +
                                   " bash scripts/quickstart_lora.sh");
  INFO(l.output.substr(l.output.size() > 4000 ? l.output.size() - 4000 : 0));
  CHECK(l.exit_code == 0);
  const double lora_before = eval_accuracy(lora_out / "eval_sft.jsonl");
  const double lora_after = eval_accuracy(lora_out / "eval_lora.jsonl");
  CHECK(lora_before == Approx(after_sft));
  CHECK(lora_after >= lora_before + 0.1);
  auto lora_metrics = vime::test::read_metrics(lora_out / "metrics.jsonl");
  REQUIRE(lora_metrics["train/train_rollout_logprob_abs_diff"].size() == kGrpoRollouts);
  // The engine generates with the adapters: its log-probs are the trainer's.
  for (double d : lora_metrics["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(fs::exists(lora_out / "ckpt" / "iter_0000019" / "adapter" / "adapter_config.json"));
}
