// `vime train` on the vLLM backend against real `vime serve` processes on 127.0.0.1 (vime's
// stand-in for `vllm serve`: same argv, same HTTP API): engines launched by vime
// (VIME_VLLM_COMMAND) or external ones given by address, vime balancing between them, disk weight
// updates checked through the rollout/trainer log-prob agreement, and an engine killed mid-rollout
// recovered by --use-fault-tolerance with no sample lost.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "support/ports.hpp"
#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/json.hpp"

namespace fs = std::filesystem;
using vime::test::run_command;

namespace {

const fs::path& task_dir() { return vime::test::tiny_arith_task(); }

std::string grpo_flags(int rollout_batch_size = 4, int max_len = 8) {
  const auto t = task_dir().string();
  return "--hf-checkpoint " + t + "/model --prompt-data " + t +
         "/data/train.jsonl --input-key input --label-key label --rm-type math"
         " --advantage-estimator grpo --rollout-batch-size " +
         std::to_string(rollout_batch_size) + " --n-samples-per-prompt 4 --global-batch-size " +
         std::to_string(rollout_batch_size * 4) + " --rollout-max-response-len " +
         std::to_string(max_len) + " --lr 1e-3 ";
}

// The engines go after the default 8 actor GPUs (GPU 8, 9): listed, so the plan holds on any
// machine, and beyond the GPUs a test machine has, so they serve on the CPU. Where this process
// runs its ranks on the CPU (support/rank_devices.cpp emptied CUDA_VISIBLE_DEVICES: too few GPUs),
// the listed ids name no device at all.
std::string engine_command() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const bool hidden = visible != nullptr && *visible == '\0';
  std::string ids;
  for (int i = 0; i < 16; ++i) ids += (i ? "," : "") + std::to_string(hidden ? 100 + i : i);
  return "CUDA_VISIBLE_DEVICES=" + ids + " VIME_VLLM_COMMAND='" + VIME_BIN + " serve' ";
}

// Pids of processes whose command line holds every one of `parts`.
std::vector<pid_t> find_processes(const std::vector<std::string>& parts) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    bool all = !cmdline.empty() && std::stoi(name) != ::getpid();
    for (const auto& p : parts) all = all && cmdline.find(p) != std::string::npos;
    if (all) pids.push_back(std::stoi(name));
  }
  return pids;
}

bool wait_healthy(int port, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = vime::http::fetch(
        vime::http::Request::get("http://127.0.0.1:" + std::to_string(port) + "/health", 1));
    if (r.ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Samples of one rollout's debug data.
std::vector<vime::Json> rollout_samples(const fs::path& file) {
  auto doc = vime::Json::parse(vime::read_text_file(file), file.string());
  return doc.at("samples").as_array();
}

}  // namespace

TEST_CASE("vime train --rollout-backend vllm: two launched vime serve engines, disk weight sync",
          "[vllm_backend]") {
  vime::test::TempDir run;
  const auto metrics = run.path() / "metrics.jsonl";
  const auto disk = run.path() / "weights";
  auto r = run_command(engine_command() + VIME_BIN + " train " + grpo_flags() +
                       "--num-rollout 3 --ci-test --rollout-backend vllm --rollout-num-gpus 2 "
                       "--update-weight-transport disk --update-weight-disk-dir " +
                       disk.string() + " --metrics-jsonl " + metrics.string() + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Two engines, both used.
  std::regex served(R"(engine (http://127\.0\.0\.1:\d+): (\d+) requests)");
  std::set<std::string> engines;
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), served), end; it != end; ++it) {
    CHECK(std::stoi((*it)[2]) > 0);
    engines.insert((*it)[1]);
  }
  CHECK(engines.size() == 2);
  // A clean run removes its engine logs.
  std::smatch logs;
  REQUIRE(std::regex_search(r.output, logs, std::regex(R"(logs in (\S+))")));
  CHECK_FALSE(fs::exists(logs[1].str()));
  // The engines really serve the trained weights: after each update their log-probs match the
  // trainer's (a stale engine would be off by the update's size; lr 1e-3 moves them visibly).
  auto m = vime::test::read_metrics(metrics);
  REQUIRE(m["train/train_rollout_logprob_abs_diff"].size() >= 3);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(m["rollout/log_probs"].size() == 3);
  // Only the latest weights stay on disk; no engine process is left behind.
  CHECK(fs::exists(disk / "weights_v3" / "model.safetensors"));
  CHECK_FALSE(fs::exists(disk / "weights_v2"));
  CHECK(find_processes({VIME_BIN, " serve ", task_dir().string()}).empty());
}

TEST_CASE(
    "vime train --rollout-backend vllm at tensor-parallel size 2: shards gathered for the engine",
    "[vllm_backend]") {
  // Rank 0 sends, rank 1 gathers its shards with it at every update (the first one included); the
  // engine's log-probs then match the trainer's, which a stale or half-gathered model would miss.
  vime::test::TempDir run;
  const auto metrics = run.path() / "metrics.jsonl";
  const auto disk = run.path() / "weights";
  auto r = run_command(engine_command() + VIME_BIN + " train " + grpo_flags() +
                       "--num-rollout 2 --ci-test --rollout-backend vllm --rollout-num-gpus 1 "
                       "--update-weight-transport disk --update-weight-disk-dir " +
                       disk.string() +
                       " --actor-num-nodes 1 --actor-num-gpus-per-node 2 "
                       "--tensor-model-parallel-size 2 --metrics-jsonl " +
                       metrics.string() + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("x 2 tensor-parallel"));
  auto m = vime::test::read_metrics(metrics);
  REQUIRE(m["train/train_rollout_logprob_abs_diff"].size() >= 2);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK(fs::exists(disk / "weights_v2" / "model.safetensors"));
}

TEST_CASE("vime train --async / --fully-async on the vLLM backend: launched engines, disk sync",
          "[vllm_backend]") {
  vime::test::TempDir run;
  const auto disk = run.path() / "weights";
  const std::string base = engine_command() + VIME_BIN + " train " + grpo_flags() +
                           "--num-rollout 3 --rollout-backend vllm --rollout-num-gpus 1 "
                           "--update-weight-transport disk --update-weight-disk-dir " +
                           disk.string() + " ";
  // One step ahead: rollout k + 1 generates on the weights before rollout k trained.
  auto r = run_command(base + "--async --metrics-jsonl " + (run.path() / "a.jsonl").string() +
                       " --save-debug-rollout-data " +
                       (run.path() / "a_{rollout_id}.json").string() + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> expected = {"0", "0", "1"};
  for (int k = 0; k < 3; ++k) {
    for (const auto& s : rollout_samples(run.path() / ("a_" + std::to_string(k) + ".json"))) {
      INFO("rollout " << k);
      REQUIRE(s.at("weight_versions").as_array().size() == 1);
      CHECK(s.at("weight_versions").as_array()[0].as_string() == expected[k]);
    }
  }
  auto m = vime::test::read_metrics(run.path() / "a.jsonl");
  CHECK(m["rollout/async/version_lag_mean"] == std::vector<double>{0, 1, 1});
  // On-policy at lag 0: the engines serve the trainer's weights.
  REQUIRE(m["train/train_rollout_logprob_abs_diff/lag_0"].size() == 1);
  CHECK(m["train/train_rollout_logprob_abs_diff/lag_0"][0] < 1e-4);
  // Continuously, the engines updated under the requests in flight (paused, not dropped).
  auto f = run_command(base + "--fully-async --max-staleness 1 --metrics-jsonl " +
                       (run.path() / "f.jsonl").string() + " 2>&1");
  INFO(f.output);
  REQUIRE(f.exit_code == 0);
  auto fm = vime::test::read_metrics(run.path() / "f.jsonl");
  REQUIRE(fm["rollout/async/version_lag_max"].size() == 3);
  for (double lag : fm["rollout/async/version_lag_max"]) CHECK(lag <= 1);
  CHECK(find_processes({VIME_BIN, " serve ", task_dir().string()}).empty());
}

TEST_CASE("vime train: external vime serve engines by address; unreachable ones are named",
          "[vllm_backend]") {
  vime::test::TempDir run;
  const std::string model = (task_dir() / "model").string();
  // Each engine binds a port of its own choosing (--port 0) and says which in its log.
  std::vector<fs::path> logs;
  for (const char* backend : {"disk", "disk", "nccl"}) {  // the third is refused by a disk run
    logs.push_back(run.path() / ("serve_" + std::to_string(logs.size()) + ".log"));
    run_command(std::string("(") + VIME_BIN + " serve " + model +
                " --port 0 --weight-transfer-config '{\"backend\":\"" + backend + "\"}' > " +
                logs.back().string() + " 2>&1 &)");
  }
  std::vector<int> ports;
  for (const auto& log : logs) {
    ports.push_back(vime::test::wait_reported_port(log, 120));
    INFO(vime::read_text_file(log));
    REQUIRE(ports.back() > 0);
    REQUIRE(wait_healthy(ports.back(), 60));
  }
  const int p1 = ports[0], p2 = ports[1], p3 = ports[2];
  auto mismatch = run_command(
      std::string(VIME_BIN) + " train " + grpo_flags() +
      "--num-rollout 1 --rollout-external-engine-addrs 127.0.0.1:" + std::to_string(p3) +
      " --update-weight-transport disk --update-weight-disk-dir " +
      (run.path() / "weights3").string() + " 2>&1");
  CHECK(mismatch.exit_code != 0);
  CHECK_THAT(mismatch.output,
             Catch::Contains("external engine http://127.0.0.1:" + std::to_string(p3)) &&
                 Catch::Contains("backend \"nccl\"") &&
                 Catch::Contains("--update-weight-transport"));
  const auto metrics = run.path() / "metrics.jsonl";
  auto r = run_command(
      std::string(VIME_BIN) + " train " + grpo_flags() +
      "--num-rollout 2 --rollout-external-engine-addrs 127.0.0.1:" + std::to_string(p1) +
      " 127.0.0.1:" + std::to_string(p2) +
      " --update-weight-transport disk --update-weight-disk-dir " +
      (run.path() / "weights").string() + " --metrics-jsonl " + metrics.string() + " 2>&1");
  for (pid_t pid : find_processes({VIME_BIN, " serve ", model})) ::kill(pid, SIGTERM);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = vime::test::read_metrics(metrics);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  CHECK_THAT(r.output, Catch::Contains("127.0.0.1:" + std::to_string(p1)) &&
                           Catch::Contains("127.0.0.1:" + std::to_string(p2)));

  auto down =
      run_command(std::string(VIME_BIN) + " train " + grpo_flags() +
                  "--num-rollout 1 --rollout-external-engine-addrs 127.0.0.1:" +
                  std::to_string(vime::http::free_port()) + " --rollout-health-check-timeout 2" +
                  " --update-weight-transport disk --update-weight-disk-dir " +
                  (run.path() / "weights2").string() + " 2>&1");
  CHECK(down.exit_code != 0);
  CHECK_THAT(down.output, Catch::Contains("127.0.0.1") && Catch::Contains("vime train:"));
}

TEST_CASE(
    "vime train --use-fault-tolerance: an engine killed mid-rollout is restarted, no sample "
    "lost",
    "[vllm_backend]") {
  vime::test::TempDir run;
  const auto log = run.path() / "train.log";
  const std::string dump = (run.path() / "rollout_{rollout_id}.json").string();
  const int rollouts = 3;
  // Long enough rollouts (64 samples x up to 256 tokens, ~1 s) for the kill to land mid-generation.
  const std::string command =
      engine_command() + VIME_BIN + " train " + grpo_flags(16, 256) + "--num-rollout " +
      std::to_string(rollouts) +
      " --rollout-backend vllm --rollout-num-gpus 2 --use-fault-tolerance"
      " --rollout-health-check-interval 0.2 --rollout-health-check-timeout 5"
      " --update-weight-transport disk --update-weight-disk-dir " +
      (run.path() / "weights").string() + " --save-debug-rollout-data " + dump;
  // The subshell's own output goes to /dev/null: run_command reads its pipe to the end.
  run_command("(" + command + " > " + log.string() + " 2>&1; echo exit=$? >> " + log.string() +
              ") > /dev/null 2>&1 &");
  // Kill one engine while it generates (its /metrics shows requests running).
  std::regex url(R"(http://127\.0\.0\.1:(\d+))");
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::string text = fs::exists(log) ? vime::read_text_file(log) : "";
    if (text.find("exit=") != std::string::npos) break;
    std::smatch m;
    if (!std::regex_search(text, m, url)) continue;
    const std::string port = m[1];
    auto metrics =
        vime::http::fetch(vime::http::Request::get("http://127.0.0.1:" + port + "/metrics", 1));
    if (metrics.body.find("vllm:num_requests_running{model_name=") == std::string::npos) continue;
    std::smatch running;
    std::regex running_re(R"(vllm:num_requests_running\{[^}]*\} (\d+))");
    if (!std::regex_search(metrics.body, running, running_re) || std::stoi(running[1]) == 0) {
      continue;
    }
    for (pid_t pid : find_processes({" serve ", "--port " + port})) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  INFO(vime::read_text_file(log));
  REQUIRE(killed);
  std::string text;
  for (int i = 0; i < 1800 && text.find("exit=") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    text = vime::read_text_file(log);
  }
  INFO(text);
  REQUIRE(text.find("exit=0") != std::string::npos);
  CHECK_THAT(text, Catch::Contains("restarted"));
  std::smatch logs;  // a run with a restart keeps its engine logs, and says where
  REQUIRE(std::regex_search(text, logs, std::regex(R"(engine logs kept in (\S+))")));
  CHECK(fs::exists(fs::path(logs[1].str()) / "engine-engine-1.log"));
  fs::remove_all(logs[1].str());
  // Every rollout has all 64 samples, none failed.
  for (int id = 0; id < rollouts; ++id) {
    const auto samples = rollout_samples(run.path() / ("rollout_" + std::to_string(id) + ".json"));
    CHECK(samples.size() == 64);
    for (const auto& s : samples) CHECK(s.at("status").as_string() != "failed");
  }
  CHECK(find_processes({VIME_BIN, " serve ", task_dir().string()}).empty());
}

TEST_CASE(
    "vime train on vLLM: over-sampling aborts in-flight requests at the target, partial "
    "rollouts go back to the buffer, nothing fails",
    "[vllm_backend]") {
  vime::test::TempDir run;
  const std::string dump = (run.path() / "rollout_{rollout_id}.json").string();
  // 16 groups in flight for a target of 4: the rollout aborts the other 12 mid-generation
  // (/pause?mode=abort on both engines) and keeps their partial samples for the next rollout.
  auto r = run_command(engine_command() + VIME_BIN + " train " + grpo_flags(4, 256) +
                       "--num-rollout 3 --over-sampling-batch-size 16 --partial-rollout"
                       " --rollout-backend vllm --rollout-num-gpus 2"
                       " --update-weight-transport disk --update-weight-disk-dir " +
                       (run.path() / "weights").string() + " --save-debug-rollout-data " + dump +
                       " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (int id = 0; id < 3; ++id) {
    const auto samples = rollout_samples(run.path() / ("rollout_" + std::to_string(id) + ".json"));
    CHECK(samples.size() == 16);
    for (const auto& s : samples) {
      CHECK(s.at("status").as_string() != "failed");
      CHECK(s.at("status").as_string() != "aborted");
    }
  }
  CHECK(find_processes({VIME_BIN, " serve ", task_dir().string()}).empty());
}

TEST_CASE(
    "vime train on vLLM --colocate: engines sleep while training runs and wake with the new "
    "weights",
    "[vllm_backend]") {
  vime::test::TempDir run;
  const auto metrics = run.path() / "metrics.jsonl";
  // --colocate: 2 engines on the actor's 2 "GPUs", started with --enable-sleep-mode; each train
  // step runs between /sleep?level=1 and /wake_up (weights, then KV cache) around the disk update.
  auto r = run_command(engine_command() + VIME_BIN + " train " + grpo_flags() +
                       "--num-rollout 2 --ci-test --rollout-backend vllm --colocate"
                       " --actor-num-gpus-per-node 2 --update-weight-transport disk"
                       " --update-weight-disk-dir " +
                       (run.path() / "weights").string() + " --metrics-jsonl " + metrics.string() +
                       " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = vime::test::read_metrics(metrics);
  REQUIRE(m["train/train_rollout_logprob_abs_diff"].size() == 2);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  auto nccl = run_command(engine_command() + VIME_BIN + " train " + grpo_flags() +
                          "--num-rollout 1 --rollout-backend vllm --colocate"
                          " --actor-num-gpus-per-node 2 2>&1");
  CHECK(nccl.exit_code == 2);
  CHECK_THAT(nccl.output, Catch::Contains("--colocate") && Catch::Contains("disk"));
}

TEST_CASE(
    "vime train --vllm-config with a judge model: rollouts and weights go to the policy "
    "only; a reward plugin reaches the judge through args.vllm_model_urls",
    "[vllm_backend]") {
  vime::test::TempDir run;
  // The judge is another (smaller) model: a weight update sent to it would be refused (shapes), and
  // rollouts sent to it would not match the trainer's log-probs under --ci-test.
  auto made = run_command(std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " +
                          (run.path() / "judge").string() +
                          " --num-train 4 --num-test 1 --hidden-size 32 --num-layers 1"
                          " --head-dim 16 --intermediate-size 64");
  REQUIRE(made.exit_code == 0);
  const auto config = run.write("vllm.yaml",
                                "vllm:\n"
                                "  - name: judge\n"
                                "    model_path: " +
                                    (run.path() / "judge/model").string() +
                                    "\n    server_groups: [{num_gpus: 1}]\n"
                                    "  - name: policy\n"
                                    "    server_groups: [{num_gpus: 1}]\n");
  const auto metrics = run.path() / "metrics.jsonl";
  const std::string dump = (run.path() / "rollout_{rollout_id}.json").string();
  auto r = run_command(engine_command() + VIME_BIN + " train " + grpo_flags() +
                       "--num-rollout 2 --ci-test --vllm-config " + config.string() +
                       " --custom-rm-path " + vime::test::plugin_path("judge_reward") +
                       ":judge_logprob --update-weight-transport disk --update-weight-disk-dir " +
                       (run.path() / "weights").string() + " --metrics-jsonl " + metrics.string() +
                       " --save-debug-rollout-data " + dump + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("model policy generates, also serving judge (1)"));
  // One rollout engine (the policy's) served every request.
  std::regex served(R"(engine (http://127\.0\.0\.1:\d+): (\d+) requests)");
  int engines = 0;
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), served), end; it != end; ++it) {
    CHECK(std::stoi((*it)[2]) == 2 * 16);
    ++engines;
  }
  CHECK(engines == 1);
  auto m = vime::test::read_metrics(metrics);
  REQUIRE(m["train/train_rollout_logprob_abs_diff"].size() >= 2);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-4);
  // Every reward is the judge's log-prob of its next token: negative, from a real answer.
  for (int id = 0; id < 2; ++id) {
    const auto samples = rollout_samples(run.path() / ("rollout_" + std::to_string(id) + ".json"));
    REQUIRE(samples.size() == 16);
    for (const auto& s : samples) {
      CHECK(s.at("status").as_string() != "failed");
      CHECK(s.at("reward").as_double() < 0);
    }
  }
}

TEST_CASE(
    "vime train on vLLM: no engine, no vllm, or VIME_VLLM_COMMAND pointing nowhere fails in "
    "seconds, naming what to set",
    "[vllm_backend]") {
  vime::test::TempDir run;
  const auto empty_path = run.path() / "bin";  // PATH for vime: no `vllm` anywhere
  fs::create_directories(empty_path);
  const std::string disk = " --update-weight-transport disk --update-weight-disk-dir " +
                           (run.path() / "weights").string();
  struct Case {
    std::string env;    // before the vime binary
    std::string flags;  // after grpo_flags()
    int exit_code;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      // A user sizing the embedded engine with vLLM's flag: it chooses the vLLM backend, which
      // then has no engine to start (this once waited with "generating with vLLM engines").
      {"",
       "--vllm-gpu-memory-utilization 0.6",
       2,
       {"the vLLM backend (chosen by --vllm-gpu-memory-utilization) has no engine",
        "--rollout-num-gpus N", "--rollout-gpu-memory-utilization"}},
      // An engine to start, but no vllm installed.
      {"env -u VIME_VLLM_COMMAND PATH=" + empty_path.string() + " ",
       "--vllm-gpu-memory-utilization 0.6 --rollout-num-gpus 1",
       1,
       {"--vllm-gpu-memory-utilization selects the vLLM backend",
        "--rollout-gpu-memory-utilization", "cannot start engine 0: 'vllm' is not on PATH",
        "VIME_VLLM_COMMAND"}},
      {"env VIME_VLLM_COMMAND='/nonexistent/vllm serve' ",
       "--rollout-backend vllm --rollout-num-gpus 1",
       1,
       {"VIME_VLLM_COMMAND=\"/nonexistent/vllm serve\": '/nonexistent/vllm' is not an "
        "executable file"}},
  };
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_command("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9 timeout -k 5 120 " + c.env +
                         VIME_BIN + " train " + grpo_flags() + "--num-rollout 1 " + c.flags + disk +
                         " 2>&1");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(c.flags << " -> " << r.output);
    CHECK(r.exit_code == c.exit_code);
    CHECK(seconds < 30);
    for (const auto& e : c.expected) CHECK_THAT(r.output, Catch::Contains(e));
    CHECK_THAT(r.output, !Catch::Contains("generating with"));
  }
}

TEST_CASE("vime train on vLLM: requests an engine refuses stop the run in the engine's words",
          "[vllm_backend]") {
  // The launched engine's context (--max-model-len 4 from --rollout-max-context-len) holds none of
  // the prompts: every request answers HTTP 400, each sample fails, and the run stops after
  // rollout 0 with the count and the engine's message (not a batch-size complaint).
  vime::test::TempDir run;
  const auto t0 = std::chrono::steady_clock::now();
  auto r =
      run_command(engine_command() + "timeout -k 5 120 " + VIME_BIN + " train " + grpo_flags() +
                  "--num-rollout 2 --rollout-backend vllm --rollout-num-gpus 1"
                  " --rollout-max-context-len 4 --rollout-max-prompt-len 100"
                  " --update-weight-transport disk --update-weight-disk-dir " +
                  (run.path() / "weights").string() + " 2>&1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(seconds < 30);
  CHECK_THAT(r.output,
             Catch::Contains("vime train: error: rollout 0: 16 of 16 samples failed to generate; "
                             "first error: VllmEngine: POST http://127.0.0.1:") &&
                 Catch::Contains("HTTP 400: generate: the prompt has ") &&
                 !Catch::Contains("--global-batch-size"));
  std::smatch logs;  // a failed run keeps its engine logs
  if (std::regex_search(r.output, logs, std::regex(R"(engine logs kept in (\S+))")))
    fs::remove_all(logs[1].str());
  CHECK(find_processes({VIME_BIN, " serve ", task_dir().string()}).empty());
}
