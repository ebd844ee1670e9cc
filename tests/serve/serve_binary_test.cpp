// The real `vime serve` binary on a make_arith_task model: started with vime's --hf-checkpoint form
// and with `vllm serve`'s command line as vime's launcher writes it; /health, routes, SIGTERM, exit
// code 0; usage errors exit 2.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <regex>
#include <thread>
#include <vector>

#include "support/ports.hpp"
#include "support/test_support.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/http/client.hpp"
#include "vime/json.hpp"

using vime::Json;

namespace {

std::string make_model(const vime::test::TempDir& dir) {
  auto made = vime::test::run_command(std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " +
                                      dir.path().string() +
                                      " --num-train 16 --num-test 4 --hidden-size 32"
                                      " --num-layers 1 --head-dim 16 --intermediate-size 64");
  REQUIRE(made.exit_code == 0);
  return (dir.path() / "model").string();
}

// `vime serve ARGS... --port 0` as a child with stdout and stderr in `log`; sets `port` to the one
// it reports binding and waits for /health.
pid_t start_serve(const std::vector<std::string>& args, const std::string& log, int& port) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    (void)out;
    ::dup2(::fileno(stdout), 2);
    std::vector<char*> argv{const_cast<char*>(VIME_BIN), const_cast<char*>("serve")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(const_cast<char*>("--port"));
    argv.push_back(const_cast<char*>("0"));
    argv.push_back(nullptr);
    ::execv(VIME_BIN, argv.data());
    ::_exit(127);
  }
  port = vime::test::wait_reported_port(log, 120);
  INFO(vime::test::run_command("cat " + log).output);
  REQUIRE(port > 0);
  httplib::Client c("127.0.0.1", port);
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    auto h = c.Get("/health");
    up = h && h->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(up);
  return pid;
}

void stop_serve(pid_t pid, const std::string& log) {
  ::kill(pid, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO(vime::test::run_command("cat " + log).output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST_CASE("serve: the vime binary serves, answers and exits 0 on SIGTERM", "[serve]") {
  vime::test::TempDir dir;
  const std::string model = make_model(dir), log = (dir.path() / "serve.log").string();
  int port = 0;
  const pid_t pid =
      start_serve({"--hf-checkpoint", model, "--served-model-name", "arith"}, log, port);
  httplib::Client c("127.0.0.1", port);
  auto r = c.Post("/v1/completions", R"({"prompt":"12+34=","max_tokens":3,"temperature":0})",
                  "application/json");
  REQUIRE(r);
  CHECK(r->status == 200);
  const Json body = Json::parse(r->body);
  CHECK(body.at("model").as_string() == "arith");
  CHECK(body.at("usage").at("completion_tokens").as_int() == 3);
  stop_serve(pid, log);
}

TEST_CASE("serve: the binary takes vllm serve's command line as vime's launcher writes it",
          "[serve]") {
  vime::test::TempDir dir;
  const std::string model = make_model(dir), log = (dir.path() / "serve.log").string();
  int port = 0;
  const pid_t pid = start_serve({model,
                                 "--host",
                                 "127.0.0.1",
                                 "--seed",
                                 "1235",
                                 "--tensor-parallel-size",
                                 "1",
                                 "--max-model-len",
                                 "256",
                                 "--weight-transfer-config",
                                 R"({"backend":"disk"})",
                                 "--logprobs-mode",
                                 "processed_logprobs",
                                 "--enable-sleep-mode",
                                 "--trust-remote-code",
                                 "--generation-config",
                                 "vllm",
                                 "--enable-prompt-tokens-details",
                                 "--served-model-name",
                                 "arith",
                                 "--api-key",
                                 "sesame",
                                 "--gpu-memory-utilization=0.85",
                                 "--enforce-eager",
                                 "--block-size",
                                 "32",
                                 "--max-num-seqs",
                                 "8"},
                                log, port);
  httplib::Client c("127.0.0.1", port);
  CHECK(c.Get("/v1/models")->status == 401);
  c.set_bearer_token_auth("sesame");
  const Json models = Json::parse(c.Get("/v1/models")->body);
  CHECK(models.at("data").at(size_t{0}).at("id").as_string() == "arith");
  CHECK(models.at("data").at(size_t{0}).at("max_model_len").as_int() == 256);
  const Json info = Json::parse(c.Get("/server_info?config_format=json")->body);
  CHECK(info.at("vllm_config").at("parallel_config").at("tensor_parallel_size").as_int() == 1);

  const std::string request =
      R"({"token_ids":[16,17,18],"sampling_params":{"max_tokens":4,"temperature":0,"logprobs":0}})";
  auto first = c.Post("/inference/v1/generate", request, "application/json");
  REQUIRE(first);
  REQUIRE(first->status == 200);
  CHECK(c.Post("/sleep?level=1", "", "application/json")->status == 200);
  CHECK(Json::parse(c.Get("/is_sleeping")->body).at("is_sleeping").as_bool());
  CHECK(c.Post("/wake_up", "", "application/json")->status == 200);
  auto rpc = c.Post("/collective_rpc", R"({"method":"reload_weights"})", "application/json");
  REQUIRE(rpc);
  CHECK(rpc->body == R"({"results":[null]})");
  CHECK(c.Post("/init_weight_transfer_engine", R"({"init_info":{}})", "application/json")->status ==
        200);
  auto again = c.Post("/inference/v1/generate", request, "application/json");
  REQUIRE(again);
  CHECK(Json::parse(again->body).at("choices") == Json::parse(first->body).at("choices"));
  stop_serve(pid, log);
  const std::string output = vime::test::run_command("cat " + log).output;
  // On the CPU the flag cannot size the cache, and says so; on CUDA it does.
  if (!vime::core::runtime_info().cuda_available)
    CHECK_THAT(output, Catch::Contains("--gpu-memory-utilization applies on CUDA only"));
  CHECK_THAT(output, !Catch::Contains("--enforce-eager"));  // honoured: decode without CUDA graphs
  CHECK_THAT(output, Catch::Contains("at http://127.0.0.1:" + std::to_string(port)));
}

// One series of /metrics (unlabelled by test: the first sample of `name`).
double metric(httplib::Client& c, const std::string& name) {
  auto r = c.Get("/metrics");
  REQUIRE(r);
  std::smatch m;
  REQUIRE(std::regex_search(r->body, m, std::regex(name + R"(\{[^}]*\} (\S+))")));
  return std::stod(m[1].str());
}

// What the vLLM backend does to a launched engine (--vllm-server-concurrency requests in flight):
// more concurrent requests than the old 64 HTTP threads all reach the engine and decode in one
// batch. A server that serialises requests, or caps them at its thread pool, leaves the rest
// unread and the decode batch smaller.
TEST_CASE("serve: concurrent requests all reach the engine and decode as one batch", "[serve]") {
  vime::test::TempDir dir;
  const std::string model = make_model(dir), log = (dir.path() / "serve.log").string();
  int port = 0;
  const pid_t pid = start_serve({model}, log, port);
  httplib::Client c("127.0.0.1", port);
  REQUIRE(c.Post("/pause?mode=keep", "", "application/json")->status == 200);
  constexpr int kRequests = 96;
  vime::http::Client client;
  std::vector<std::future<vime::http::Response>> answers;
  const Json body = Json::parse(
      R"({"token_ids":[16,17,18],"sampling_params":{"max_tokens":8,"ignore_eos":true}})");
  for (int i = 0; i < kRequests; ++i) {
    answers.push_back(client.send(vime::http::Request::post_json(
        "http://127.0.0.1:" + std::to_string(port) + "/inference/v1/generate", body, 120)));
  }
  // Paused, the engine queues every request it is handed.
  double waiting = 0;
  for (int i = 0; i < 600 && waiting < kRequests; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    waiting = metric(c, "vllm:num_requests_waiting");
  }
  CHECK(waiting == kRequests);
  REQUIRE(c.Post("/resume", "", "application/json")->status == 200);
  for (auto& a : answers) {
    const auto r = a.get();
    CHECK(r.status == 200);
  }
  // One prefill step, then 7 decode steps of all 96 rows.
  const double steps = metric(c, "vime:decode_steps_total");
  const double rows = metric(c, "vime:decode_rows_total");
  REQUIRE(steps > 0);
  CHECK(rows / steps >= kRequests - 4);
  stop_serve(pid, log);
  const std::string output = vime::test::run_command("cat " + log).output;
  // Where CUDA is visible vime serve takes the GPU (and its dtype); elsewhere the CPU in fp32.
  if (vime::core::runtime_info().cuda_available)
    CHECK_THAT(output, Catch::Contains(" on cuda"));
  else
    CHECK_THAT(output, Catch::Contains("on cpu, float32, up to"));
}

TEST_CASE("serve: vllm flags it cannot honour are usage errors (exit 2)", "[serve]") {
  vime::test::TempDir dir;
  const std::string model = make_model(dir);
  auto tp = vime::test::run_vime("serve " + model + " --tensor-parallel-size 2");
  CHECK(tp.exit_code == 2);
  CHECK_THAT(tp.output, Catch::Contains("one GPU"));
  auto pp = vime::test::run_vime("serve " + model + " --pipeline-parallel-size=2");
  CHECK(pp.exit_code == 2);
  CHECK_THAT(pp.output, Catch::Contains("--pipeline-parallel-size"));
  auto unknown = vime::test::run_vime("serve " + model + " --speculative-decoding 3");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("--speculative-decoding"));
  auto ipc =
      vime::test::run_vime("serve " + model + R"( --weight-transfer-config '{"backend":"ipc"}')");
  CHECK(ipc.exit_code == 2);
  CHECK_THAT(ipc.output, Catch::Contains("ipc"));
  auto mode = vime::test::run_vime("serve " + model + " --logprobs-mode raw_logits");
  CHECK(mode.exit_code == 2);
  CHECK_THAT(mode.output, Catch::Contains("raw_logits"));
  auto parser = vime::test::run_vime("serve " + model +
                                     " --enable-auto-tool-choice --tool-call-parser pythonic");
  CHECK(parser.exit_code == 2);
  CHECK_THAT(parser.output, Catch::Contains("--tool-call-parser pythonic"));
  auto alone = vime::test::run_vime("serve " + model + " --enable-auto-tool-choice");
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.output, Catch::Contains("go together"));
  for (const char* bad : {"--gpu-memory-utilization 0", "--gpu-memory-utilization 1.5",
                          "--block-size 0", "--max-num-seqs 0"}) {
    auto r = vime::test::run_vime("serve " + model + " " + bad);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(std::string(bad).substr(0, std::string(bad).find(' '))));
  }
  auto none = vime::test::run_vime("serve --port 0");
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.output, Catch::Contains("MODEL_DIR"));
}
