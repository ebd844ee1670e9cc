// `vime train` and `vime eval` end to end, as a user runs them: the real binary on a tiny Qwen3 in
// HF format (make_arith_task), the embedded engine, rm_hub's math reward, the example plugins,
// checkpoints and resume, the debug-data flags and --ci-test.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>

#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

namespace fs = std::filesystem;
using vime::test::run_command;
using vime::test::run_vime;

namespace {

// One tiny task for every case of this file (made once: ~1 s).
const fs::path& task_dir() { return vime::test::tiny_arith_task(); }

std::string grpo_flags() { return vime::test::tiny_grpo_flags("1e-4"); }

std::string eval_flags() {
  return "--eval-prompt-data arith " + (task_dir() / "data/test.jsonl").string() +
         " --eval-temperature 0 --eval-max-response-len 8 ";
}

}  // namespace

TEST_CASE("vime train: GRPO with --ci-test, eval, metrics, save and resume", "[train_cli]") {
  vime::test::TempDir run;
  const auto metrics = run.path() / "metrics.jsonl";
  const auto save = run.path() / "ckpt";
  auto r = run_vime("train " + grpo_flags() + eval_flags() +
                    "--num-rollout 2 --eval-interval 2 --ci-test --save " + save.string() +
                    " --save-interval 1 --metrics-jsonl " + metrics.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("rollout/step 1 ") && Catch::Contains("vime train: done"));
  auto m = vime::test::read_metrics(metrics);
  // slime's invariants, measured: actor = reference at rollout 0, on-policy step 0, and the
  // engine's log-probs agree with the trainer's.
  REQUIRE(m["rollout/log_probs"].size() == 2);
  CHECK(m["rollout/log_probs"][0] == Approx(m["rollout/ref_log_probs"][0]).margin(1e-8));
  CHECK(m["train/ppo_kl"].at(0) == 0.0);
  REQUIRE_FALSE(m["train/train_rollout_logprob_abs_diff"].empty());
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  // Eval before training and after the last rollout; rollout and perf metrics with slime's names.
  CHECK(m["eval/arith"].size() == 2);
  for (const char* key : {"rollout/raw_reward", "rollout/response_len/mean", "perf/rollout_time",
                          "perf/actor_train_time", "perf/step_time", "train/grad_norm"}) {
    CHECK(m.count(key) == 1);
  }
  // The embedded engine's own counts per rollout: a cache was used, nothing ran out.
  REQUIRE(m["rollout/engine_kv_cache_gib"].size() == 2);
  CHECK(m["rollout/engine_kv_cache_gib"][0] > 0);
  for (double n : m["rollout/engine_preemptions"]) CHECK(n >= 0);
  for (double n : m["rollout/engine_out_of_memory_steps"]) CHECK(n == 0);
  CHECK(fs::exists(save / "iter_0000001" / "model" / "model.safetensors"));
  CHECK(vime::read_text_file(save / "latest_checkpointed_iteration.txt").find('1') !=
        std::string::npos);

  // Resume: the next run continues at rollout 2 with the data position restored.
  auto resumed = run_vime("train " + grpo_flags() + "--num-rollout 3 --load " + save.string() +
                          " --save " + save.string() + " --save-interval 1");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.output, Catch::Contains("rollouts 2..2"));
  CHECK(fs::exists(save / "iter_0000002"));
}

TEST_CASE("vime train: debug rollout data is saved, replayed by --debug-train-only",
          "[train_cli]") {
  vime::test::TempDir run;
  const std::string dump = (run.path() / "rollout_{rollout_id}.json").string();
  auto r = run_vime("train " + grpo_flags() + "--num-rollout 1 --debug-rollout-only " +
                    "--save-debug-rollout-data " + dump);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("train/step"));
  REQUIRE(fs::exists(run.path() / "rollout_0.json"));
  auto replay = run_vime("train " + grpo_flags() + "--num-rollout 1 --debug-train-only " +
                         "--load-debug-rollout-data " + dump);
  INFO(replay.output);
  REQUIRE(replay.exit_code == 0);
  CHECK_THAT(replay.output, Catch::Contains("train/step 0") && !Catch::Contains("samples/s"));
}

TEST_CASE("vime train: the example plugins run inside the loop", "[train_cli]") {
  const std::string plugins = VIME_EXAMPLE_PLUGIN_DIR;
  SECTION("multi-turn calculator generate plugin") {
    vime::test::TempDir run;
    auto r = run_vime("train " + grpo_flags() + "--num-rollout 1 --custom-generate-function-path " +
                      plugins + "/libmulti_turn_calculator.so --save-debug-rollout-data " +
                      (run.path() / "r{rollout_id}.json").string());
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("train/step 0"));
  }
  SECTION("best-of-n rollout function plugin") {
    auto r = run_vime("train " + grpo_flags() + "--num-rollout 1 --rollout-function-path " +
                      plugins + "/libbest_of_n_rollout.so --global-batch-size 4");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("rollout/best_of_n/kept_reward_mean"));
  }
}

TEST_CASE("vime train: trainer hooks are called at their points", "[train_cli]") {
  vime::test::TempDir run;
  const auto log = run.path() / "hooks.log";
  const std::string hooks = vime::test::plugin_path("train_hooks");
  auto r = run_command("VIME_TEST_HOOK_LOG=" + log.string() + " " VIME_BIN " train " +
                       grpo_flags() + "--num-rollout 2 --ci-test --custom-megatron-init-path " +
                       hooks + ":init_hook --custom-megatron-before-log-prob-hook-path " + hooks +
                       " --custom-megatron-before-train-step-hook-path " + hooks +
                       " --rollout-data-postprocess-path " + hooks);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto calls = vime::read_text_file(log);
  CHECK(calls.rfind("init\n", 0) == 0);  // first, before any rollout
  CHECK_THAT(calls, Catch::Contains("before_log_prob ref_\nrollout_data_postprocess 0 16\n"
                                    "before_train_step 0 0\n"));
  CHECK_THAT(calls, Catch::Contains("before_train_step 1 0"));
}

TEST_CASE("vime train: PPO trains the critic beside the actor", "[train_cli]") {
  vime::test::TempDir run;
  const auto metrics = run.path() / "metrics.jsonl";
  auto r = run_vime("train " + grpo_flags() +
                    "--advantage-estimator ppo --kl-coef 0.01 "
                    "--num-rollout 2 --ci-test --metrics-jsonl " +
                    metrics.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = vime::test::read_metrics(metrics);
  CHECK(m["train/critic-value_loss"].size() == 2);
  CHECK(m["train/critic-grad_norm"].size() == 2);
  CHECK(m["train/ppo_kl"].at(0) == 0.0);
}

TEST_CASE("vime eval: per-sample results and metrics for an HF directory", "[train_cli]") {
  vime::test::TempDir run;
  const auto out = run.path() / "samples.jsonl";
  const auto t = task_dir().string();
  auto r =
      run_vime("eval --hf-checkpoint " + t + "/model " + eval_flags() +
               "--rm-type math --input-key input --label-key label --n-samples-per-eval-prompt 2"
               " --log-passrate --eval-output " +
               out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("eval/arith ") && Catch::Contains("eval/arith-pass@2"));
  const auto text = vime::read_text_file(out);
  CHECK(vime::test::count_lines(text) == 32);  // 16 problems x 2 samples
  auto first = vime::Json::parse(text.substr(0, text.find('\n')));
  CHECK(first.at("dataset").as_string() == "arith");
  CHECK(first.contains("response"));
  CHECK(first.contains("reward"));
}

TEST_CASE("vime train / eval: bad input gives one clear error", "[train_cli]") {
  auto no_model = run_vime("train --prompt-data " + (task_dir() / "data/train.jsonl").string() +
                           " --input-key input --rollout-batch-size 1 --num-rollout 1");
  CHECK(no_model.exit_code == 2);
  CHECK_THAT(no_model.output, Catch::Contains("--hf-checkpoint"));
  // The vLLM backend on a CPU trainer: NCCL weight sync cannot work, and says what to use. (A
  // CUDA trainer gets past that and stops at the router flag that lacks its port.)
  auto vllm = run_vime("train " + grpo_flags() +
                       "--num-rollout 1 --vllm-router-ip 127.0.0.1"
                       " --rollout-external-engine-addrs 127.0.0.1:1");
  CHECK(vllm.exit_code == 2);
  CHECK_THAT(vllm.output, Catch::Contains(at::hasCUDA() ? "--vllm-router-port"
                                                        : "--update-weight-transport disk"));
  auto engine_flag = run_vime("train " + grpo_flags() +
                              "--num-rollout 1 --rollout-backend native --vllm-enforce-eager");
  CHECK(engine_flag.exit_code == 2);
  CHECK_THAT(engine_flag.output, Catch::Contains("--vllm-enforce-eager"));
  auto missing_dir = run_vime("eval --hf-checkpoint /nonexistent/model " + eval_flags());
  CHECK(missing_dir.exit_code == 2);
  CHECK_THAT(missing_dir.output, Catch::Contains("/nonexistent/model"));
  auto no_debug_data =
      run_vime("train " + grpo_flags() +
               "--num-rollout 1 --load-debug-rollout-data /nonexistent/{rollout_id}.json");
  CHECK(no_debug_data.exit_code != 0);
  CHECK_THAT(no_debug_data.output, Catch::Contains("/nonexistent/0.json"));
}

TEST_CASE("vime train: samples that fail to generate stop the run, saying how many and why",
          "[train_cli]") {
  // A real engine error: a 4-token context holds none of the task's prompts (let through by a
  // larger --rollout-max-prompt-len), so the embedded engine refuses every request. The run stops
  // after rollout 0 with the count and the engine's own words, not with a complaint about the batch
  // size the failures left.
  vime::test::TempDir run;
  const auto dump = run.path() / "rollout_{rollout_id}.json";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_command("timeout -k 5 120 " + std::string(VIME_BIN) + " train " + grpo_flags() +
                       "--num-rollout 2 --rollout-max-context-len 4 --rollout-max-prompt-len 100"
                       " --save-debug-rollout-data " +
                       dump.string() + " 2>&1");
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(seconds < 30);
  CHECK_THAT(r.output,
             Catch::Contains("vime train: error: rollout 0: 16 of 16 samples failed to generate; "
                             "first error: generate: the prompt has ") &&
                 Catch::Contains("--rollout-max-context-len") &&
                 !Catch::Contains("--global-batch-size") && !Catch::Contains("rollout 1"));
  // Every sample's own error is in the debug data.
  const auto doc = vime::Json::parse(vime::read_text_file(run.path() / "rollout_0.json"));
  for (const auto& s : doc.at("samples").as_array()) {
    CHECK(s.at("status").as_string() == "failed");
    CHECK(s.at("metadata").at("error_cat").as_string() == "generate");
  }
}
