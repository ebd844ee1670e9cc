// The quickstart (README command (a)) in short: scripts/quickstart.sh with 500 SFT steps and 4 GRPO
// rollouts on the real binaries. The held-out accuracy must rise from the random model's 0 and the
// SFT loss must fall; the GRPO stage must run with the engine and trainer agreeing on log-probs.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>

#include "loop/metrics_file.hpp"
#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

namespace {

double mean(const std::vector<double>& v, size_t begin, size_t end) {
  double s = 0;
  for (size_t i = begin; i < end; ++i) s += v.at(i);
  return s / static_cast<double>(end - begin);
}

}  // namespace

TEST_CASE("the quickstart learns: short version", "[quickstart]") {
  vime::test::TempDir dir;
  const auto out = dir.path() / "run";
  auto r = vime::test::run_command(
      "cd " VIME_SOURCE_DIR " && QUICKSTART_SKIP_BUILD=1 VIME_BIN_DIR=" VIME_BUILD_DIR
      "/bin QUICKSTART_SFT_STEPS=500 QUICKSTART_GRPO_ROLLOUTS=4 QUICKSTART_OUT=" +
      out.string() + " bash scripts/quickstart.sh");
  INFO(r.output.substr(r.output.size() > 6000 ? r.output.size() - 6000 : 0));
  REQUIRE(r.exit_code == 0);
  auto sft = vime::test::read_metrics(out / "sft_metrics.jsonl");
  const auto& evals = sft["eval/arith"];
  REQUIRE(evals.size() >= 2);
  CHECK(evals.front() == 0.0);  // the random model never even closes \boxed{}
  CHECK(evals.back() >= 0.03);  // measured 0.08-0.10 after 450-500 steps
  const auto& loss = sft["train/loss"];
  REQUIRE(loss.size() == 500);
  CHECK(mean(loss, 480, 500) < 0.35 * mean(loss, 0, 20));

  auto grpo = vime::test::read_metrics(out / "grpo_metrics.jsonl");
  REQUIRE(grpo["rollout/raw_reward"].size() == 4);
  REQUIRE(grpo["train/train_rollout_logprob_abs_diff"].size() >= 4);
  for (double d : grpo["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(std::filesystem::exists(out / "tensorboard"));
  // vime eval on the held-out problems: one line per problem.
  CHECK(vime::test::count_lines(vime::read_text_file(out / "eval_samples.jsonl")) == 500);
}
