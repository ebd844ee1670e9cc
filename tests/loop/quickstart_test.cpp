// The quickstart (README command (a)) in a cheaper version: scripts/quickstart.sh on the real
// binaries with its default 1,000 SFT steps and 4 GRPO rollouts (instead of 100). The held-out
// greedy accuracy must rise from the random model's 0 to the README's bar, >= 0.8 (seed 1 ends SFT
// at 0.99 at 1 and at 2 threads; seeds 1-5 end the full run at 0.986-1.000 at 1 and 2 threads:
// tools/results/quickstart_seed_sweep.md). Then two GRPO runs from the same SFT checkpoint with
// the same seed must log the same metrics (the embedded engine seeds each sample from
// --rollout-seed and its index, not from the order the rollout's worker threads reach it in).
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

// Mean raw_reward of `vime eval`'s per-sample output: the held-out greedy accuracy.
double eval_accuracy(const fs::path& samples) {
  std::istringstream lines(vime::read_text_file(samples));
  double correct = 0, total = 0;
  for (std::string line; std::getline(lines, line); total += 1)
    correct += vime::Json::parse(line).at("raw_reward").as_double();
  return total > 0 ? correct / total : 0.0;
}

vime::test::CommandResult grpo(const fs::path& run, const fs::path& out, int rollouts) {
  const std::string task = (run / "task").string();
  return vime::test::run_vime(
      "train --config " VIME_SOURCE_DIR
      "/examples/quickstart/grpo.yaml --seed 1 --rollout-seed 1 "
      "--hf-checkpoint " +
      task + "/model --load " + (run / "sft").string() + " --finetune --ref-load " +
      (run / "sft").string() + " --prompt-data " + task +
      "/data/train.jsonl --eval-prompt-data arith " + task +
      "/data/test.jsonl --eval-interval 100 --skip-eval-before-train --num-rollout " +
      std::to_string(rollouts) + " --metrics-jsonl " + (out / "metrics.jsonl").string());
}

}  // namespace

TEST_CASE("the quickstart learns, and a GRPO run repeats exactly", "[quickstart]") {
  vime::test::TempDir dir;
  const auto out = dir.path() / "run";
  auto r = vime::test::run_command("cd " VIME_SOURCE_DIR
                                   " && QUICKSTART_SKIP_BUILD=1 VIME_BIN_DIR=" VIME_BUILD_DIR
                                   "/bin QUICKSTART_GRPO_ROLLOUTS=4 QUICKSTART_OUT=" +
                                   out.string() + " bash scripts/quickstart.sh");
  INFO(r.output.substr(r.output.size() > 6000 ? r.output.size() - 6000 : 0));
  REQUIRE(r.exit_code == 0);
  auto sft = vime::test::read_metrics(out / "sft_metrics.jsonl");
  const auto& evals = sft["eval/arith"];
  REQUIRE(evals.size() == 11);  // steps 0, 100, ..., 1000
  CHECK(evals.front() == 0.0);  // the random model never even closes \boxed{}
  REQUIRE(sft["train/loss"].size() == 1000);
  auto grpo_metrics = vime::test::read_metrics(out / "grpo_metrics.jsonl");
  REQUIRE(grpo_metrics["rollout/raw_reward"].size() == 4);
  for (double d : grpo_metrics["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(fs::exists(out / "tensorboard"));
  const auto& loss = sft["train/loss"];
  double first = 0, last = 0;
  for (size_t i = 0; i < 20; ++i) first += loss.at(i), last += loss.at(loss.size() - 1 - i);
  CHECK(last < 0.35 * first);
  // vime eval on the 500 held-out problems, greedy: the README's bar.
  CHECK(vime::test::count_lines(vime::read_text_file(out / "eval_samples.jsonl")) == 500);
  CHECK(eval_accuracy(out / "eval_samples.jsonl") >= 0.8);

  // Two GRPO runs from that SFT checkpoint, same seed: the same samples, rewards, losses and
  // gradients. Only the engine's own log-probs may differ in the last float bits: its batches
  // are made of the requests that reached it by then, and a GEMM's rounding depends on the
  // number of rows (the trainer recomputes the log-probs it trains on).
  std::map<std::string, std::vector<double>> runs[2];
  for (int i = 0; i < 2; ++i) {
    const auto grpo_out = dir.path() / ("grpo" + std::to_string(i));
    auto g = grpo(out, grpo_out, 3);
    INFO(g.output.substr(g.output.size() > 4000 ? g.output.size() - 4000 : 0));
    REQUIRE(g.exit_code == 0);
    runs[i] = vime::test::read_metrics(grpo_out / "metrics.jsonl");
  }
  REQUIRE(runs[0]["rollout/raw_reward"].size() == 3);
  REQUIRE(runs[0]["train/loss"].size() == 3);
  double rewards = 0;
  for (double v : runs[0]["rollout/raw_reward"]) rewards += v;
  CHECK(rewards > 0);  // the comparison covers real policy-gradient steps
  CHECK(runs[0].size() == runs[1].size());
  for (const auto& [key, values] : runs[0]) {
    // Timing, and how much of each prompt the prefix cache held when its request arrived (arrival
    // order decides it; the tokens sampled do not depend on it).
    if (key.rfind("perf/", 0) == 0 || key == "_timestamp" ||
        key == "rollout/avg_cached_tokens_per_sample" || key == "rollout/prefix_cache_hit_rate")
      continue;
    INFO(key);
    const auto& other = runs[1][key];
    REQUIRE(other.size() == values.size());
    const bool engine_logprobs =
        key == "rollout/rollout_log_probs" || key == "train/train_rollout_logprob_abs_diff";
    for (size_t k = 0; k < values.size(); ++k) {
      if (engine_logprobs)
        CHECK(std::abs(values[k] - other[k]) <= 1e-6);
      else
        CHECK(values[k] == other[k]);
    }
  }
}
