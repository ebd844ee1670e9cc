// On-policy distillation with a served teacher (--use-opd --opd-type vllm --opd-teacher-model):
// the rollout's teacher client against a real `vime serve` on 127.0.0.1 (its log-probs are the
// trainer's; a --vllm-config name or a URL; failures named in one line), and `vime train` with the
// teacher launched from --vllm-config, replayed with the same teacher checkpoint inside the
// trainer (--opd-type megatron): the same teacher log-probs, reverse KL and advantages.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <ATen/core/grad_mode.h>
#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "serve/served_engine.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/rollout/opd_teacher.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/train/log_probs.hpp"

namespace fs = std::filesystem;
using vime::Json;

namespace {

vime::Args teacher_args(const std::string& teacher, const Json& model_urls = nullptr) {
  auto args = vime::core::parse_args(std::vector<std::string>{"--use-opd", "--opd-type", "sglang",
                                                              "--opd-teacher-model", teacher,
                                                              "--rollout-temperature", "0.7"});
  if (!model_urls.is_null()) args.set("vllm_model_urls", model_urls, vime::ArgSource::kDerived);
  return args;
}

// The trainer's log-probs of the last `response` tokens of `tokens` under the served model.
std::vector<float> trainer_log_probs(const std::vector<int32_t>& tokens, int64_t response,
                                     double temperature) {
  at::NoGradGuard no_grad;
  vime::Model& model = vime::test::served_model();
  const auto n = static_cast<int64_t>(tokens.size());
  auto batch =
      vime::PackedBatch::pack({std::vector<int64_t>(tokens.begin(), tokens.end())}, at::kCPU);
  auto rows = at::arange(n - response - 1, n - 1, at::kLong);
  auto targets = batch.tokens.narrow(0, n - response, response);
  auto lp = vime::train::token_log_probs(model.forward(batch), rows, targets, temperature)
                .log_probs.contiguous();
  return {lp.data_ptr<float>(), lp.data_ptr<float>() + response};
}

vime::Sample sample_of(const std::string& text, int64_t response_length) {
  vime::Sample s;
  s.tokens = vime::test::served_tokenizer().encode(text);
  s.response_length = response_length;
  return s;
}

}  // namespace

TEST_CASE(
    "--opd-teacher-model: the served teacher's log-probs of each response, by --vllm-config name "
    "or URL; failures named",
    "[opd_served]") {
  vime::test::ServedEngine teacher;
  const Json urls =
      Json::Object{{"teacher", Json::Object{{"engines", Json::Array{Json(teacher.url())}},
                                            {"router", nullptr},
                                            {"update_weights", false}}},
                   {"policy", Json::Object{{"engines", Json::Array{Json("http://127.0.0.1:1")}},
                                           {"router", nullptr},
                                           {"update_weights", true}}}};
  const auto options = vime::rollout::OpdTeacherOptions::from(teacher_args("teacher", urls));
  REQUIRE(options);
  CHECK(options->urls == std::vector<std::string>{teacher.url()});
  CHECK(options->temperature == 0.7);

  std::vector<vime::Sample> samples = {sample_of("What is 2+3? The answer is 5.", 4),
                                       sample_of("Name a prime: seven, since 7 has no divisor.", 9),
                                       sample_of("Kept as the plugin set it.", 2),
                                       sample_of("No response.", 0)};
  samples[2].teacher_log_probs = std::vector<float>{-1.0f, -2.0f};
  vime::rollout::OpdTeacher client(*options);
  client.score(samples);
  for (size_t i : {0, 1}) {
    const auto expected = trainer_log_probs(samples[i].tokens, samples[i].response_length, 0.7);
    REQUIRE(samples[i].teacher_log_probs);
    REQUIRE(samples[i].teacher_log_probs->size() == expected.size());
    // fp32 rounding: the engine packs whichever requests are queued into one forward (a GEMM's
    // rounding depends on its row count), the trainer here scores one sequence; under load the
    // two once differed by 1.0e-5 at log-probs near -6.
    for (size_t t = 0; t < expected.size(); ++t)
      CHECK((*samples[i].teacher_log_probs)[t] == Approx(expected[t]).epsilon(1e-5).margin(1e-5));
  }
  CHECK(*samples[2].teacher_log_probs == std::vector<float>{-1.0f, -2.0f});
  CHECK(samples[3].teacher_log_probs->empty());

  // A URL works as well; nothing listening there is one line naming the flag and the URL.
  CHECK(vime::rollout::OpdTeacherOptions::from(teacher_args(teacher.url() + "/"))->urls ==
        std::vector<std::string>{teacher.url()});
  const std::string down = "http://127.0.0.1:" + std::to_string(vime::http::free_port());
  std::vector<vime::Sample> fresh = {sample_of("What is 2+3? 5", 2)};
  vime::rollout::OpdTeacher unreachable(
      *vime::rollout::OpdTeacherOptions::from(teacher_args(down)));
  CHECK_THROWS_WITH(unreachable.score(fresh), Catch::Contains("--opd-teacher-model " + down + ": " +
                                                              down + "/v1/completions"));
  // A name that --vllm-config does not have, or no --vllm-config engines at all.
  CHECK_THROWS_WITH(vime::rollout::OpdTeacherOptions::from(teacher_args("judge", urls)),
                    Catch::Contains("--opd-teacher-model judge: --vllm-config has no model") &&
                        Catch::Contains("policy teacher"));
  CHECK_THROWS_WITH(vime::rollout::OpdTeacherOptions::from(teacher_args("teacher")),
                    Catch::Contains("no --vllm-config engines"));

  // An engine whose answer does not hold one log-prob per token.
  httplib::Server stub;
  stub.Post("/v1/completions", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"choices": [{"prompt_logprobs": [null, {"1": {"logprob": -1.0}}]}]})",
                    "application/json");
  });
  const int port = stub.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { stub.listen_after_bind(); });
  const std::string stub_url = "http://127.0.0.1:" + std::to_string(port);
  vime::rollout::OpdTeacher wrong(*vime::rollout::OpdTeacherOptions::from(teacher_args(stub_url)));
  fresh[0].teacher_log_probs.reset();
  CHECK_THROWS_WITH(
      wrong.score(fresh),
      Catch::Contains(stub_url + "/v1/completions answered 2 prompt log-probs") &&
          Catch::Contains("of " + std::to_string(fresh[0].tokens.size()) + " tokens"));
  stub.stop();
  serving.join();
}

TEST_CASE(
    "vime train --use-opd --opd-type vllm with the teacher launched from --vllm-config agrees "
    "with --opd-type megatron on the same teacher checkpoint",
    "[opd_served]") {
  vime::test::TempDir run;
  // The task's architecture with other random weights: a teacher the student differs from.
  auto made = vime::test::run_command(
      std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " + (run.path() / "teacher").string() +
      " --num-train 4 --num-test 1 --hidden-size 64 --num-layers 2 --head-dim 16"
      " --intermediate-size 128 --model-seed 99");
  REQUIRE(made.exit_code == 0);
  const std::string teacher_model = (run.path() / "teacher/model").string();
  const auto config =
      run.write("vllm.yaml", "vllm:\n  - name: teacher\n    model_path: " + teacher_model +
                                 "\n    server_groups: [{num_gpus: 1}]\n"
                                 "  - name: policy\n"
                                 "    server_groups: [{num_gpus: 1}]\n");
  const std::string dump = (run.path() / "rollout_{rollout_id}.json").string();
  const std::string common = vime::test::tiny_grpo_flags("1e-3") +
                             "--num-rollout 2 --rollout-temperature 0.8 --use-opd --opd-kl-coef 1 ";
  // The engines go after the default 8 actor GPUs, beyond any test machine's: on the CPU.
  const auto served = vime::test::run_command(
      std::string(
          "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 VIME_VLLM_COMMAND='") +
      VIME_BIN + " serve' " + VIME_BIN + " train " + common +
      "--opd-type vllm --opd-teacher-model teacher --vllm-config " + config.string() +
      " --update-weight-transport disk --update-weight-disk-dir " +
      (run.path() / "weights").string() + " --save-debug-rollout-data " + dump +
      " --metrics-jsonl " + (run.path() / "served.jsonl").string() + " 2>&1");
  INFO(served.output);
  REQUIRE(served.exit_code == 0);
  CHECK_THAT(served.output, Catch::Contains("model policy generates, also serving teacher (1)"));
  // The same samples, the teacher's log-probs now computed by the trainer from the checkpoint.
  const auto in_trainer = vime::test::run_vime(
      "train " + common + "--opd-type megatron --opd-teacher-load " + teacher_model +
      " --load-debug-rollout-data " + dump + " --metrics-jsonl " +
      (run.path() / "megatron.jsonl").string() + " 2>&1");
  INFO(in_trainer.output);
  REQUIRE(in_trainer.exit_code == 0);

  auto a = vime::test::read_metrics(run.path() / "served.jsonl");
  auto b = vime::test::read_metrics(run.path() / "megatron.jsonl");
  REQUIRE(a["perf/teacher_log_probs_time"].size() == 2);
  for (double t : a["perf/teacher_log_probs_time"]) CHECK(t > 0);
  for (const char* key : {"rollout/teacher_log_probs", "rollout/opd_reverse_kl",
                          "rollout/log_probs", "rollout/advantages"}) {
    INFO(key);
    REQUIRE(a[key].size() == 2);
    REQUIRE(b[key].size() == 2);
    for (size_t i = 0; i < 2; ++i) CHECK(a[key][i] == Approx(b[key][i]).margin(1e-5));
  }
  // Another model: the reverse KL is visibly non-zero (the same model would give 0).
  for (double kl : a["rollout/opd_reverse_kl"]) CHECK(std::abs(kl) > 1e-4);
}
