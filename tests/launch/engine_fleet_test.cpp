// EngineFleet with stand-in engines (launch_test_helper engine, via VIME_VLLM_COMMAND), a fake
// vllm-router in this process (cpp-httplib) and a launched stand-in router
// (VIME_VLLM_ROUTER_COMMAND): start, health waits, registration, restart, stop, failures.
#include "vime/launch/engine_fleet.hpp"

#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "launch/launch_test_util.hpp"
#include "support/ports.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/launch/router.hpp"
#include "vime/launch/server_info.hpp"

using vime::Json;
using vime::launch::EngineFleet;
using vime::launch::FleetOptions;
using vime::launch::test::process_alive;
using Strings = std::vector<std::string>;
using namespace std::chrono_literals;

namespace {

// Sets environment variables for one test and restores them after.
class EnvGuard {
 public:
  void set(const std::string& name, const std::optional<std::string>& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~EnvGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void stand_in_env(EnvGuard& env) {
  env.set("VIME_VLLM_COMMAND", std::string(VIME_LAUNCH_TEST_HELPER) + " engine");
  env.set("VIME_VLLM_ROUTER_COMMAND", std::nullopt);
  // GPU indices as on a 16-GPU host, whatever this machine has (a GPU machine's plan is checked
  // against its own GPUs only when CUDA_VISIBLE_DEVICES is unset).
  env.set("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
  env.set("LAUNCH_HELPER_DELAY_MS", "300");  // engines are not healthy at once
  env.set("PATH", "/usr/bin:/bin");          // no real vllm-router
}

// A vllm-router stand-in in this process that records the worker calls.
class FakeRouter {
 public:
  FakeRouter() {
    server_.Post("/workers", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      const Json body = Json::parse(req.body);
      calls_.push_back("POST " + body.at("url").as_string() + " " +
                       body.at("worker_type").as_string());
      if (body.at("url").as_string().find("refuse") != std::string::npos) {
        res.status = 400;
        res.set_content(R"({"error":"no","code":"ADD_WORKER_FAILED"})", "application/json");
        return;
      }
      res.set_content(R"({"success":true,"message":"ok","worker":null})", "application/json");
    });
    server_.Delete(R"(/workers/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      // The raw target: httplib decodes `path`.
      calls_.push_back("DELETE " + req.target.substr(std::string("/workers/").size()));
      res.set_content(R"({"success":true})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeRouter() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  Strings calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  Strings calls_;
};

vime::launch::LaunchOptions parse(Strings tokens) {
  return vime::launch::LaunchOptions::from(vime::core::parse_args(tokens));
}

FleetOptions quick_options(const vime::test::TempDir& dir, Strings* progress = nullptr) {
  FleetOptions options;
  options.log_dir = dir.path() / "logs";
  options.poll_interval = 50ms;
  options.progress_interval = 100ms;
  options.startup_timeout = 20s;
  options.stop_grace = 2s;
  options.progress = [progress](const std::string& line) {
    if (progress) progress->push_back(line);
  };
  return options;
}

std::string encoded(const std::string& url) { return vime::http::percent_encode(url); }

Json get_json(const std::string& url) {
  return vime::http::fetch_json(vime::http::Request::get(url, 5), "test GET");
}

}  // namespace

TEST_CASE("router: POST /workers and DELETE /workers/<encoded url>", "[launch]") {
  FakeRouter fake;
  vime::launch::Router router("127.0.0.1:" + std::to_string(fake.port()));
  CHECK_FALSE(router.launched());
  router.add_worker("http://127.0.0.1:1234");
  router.remove_worker("http://127.0.0.1:1234");
  CHECK(fake.calls() ==
        Strings{"POST http://127.0.0.1:1234 regular", "DELETE http%3A%2F%2F127.0.0.1%3A1234"});
  CHECK_THROWS_WITH(
      router.add_worker("http://refuse:1"),
      Catch::StartsWith(router.url() + " refused engine http://refuse:1") ||
          Catch::Contains("refused engine http://refuse:1 (POST /workers): HTTP 400"));
}

TEST_CASE("router: flags for a launched vllm-router", "[launch]") {
  auto launch = parse({"--vllm-router-policy", "round_robin", "--router-request-timeout-secs", "60",
                       "--router-balance-abs-threshold", "10", "--router-disable-retries"});
  CHECK(vime::launch::router_flags(launch.router, 5) ==
        Strings{"--host", "127.0.0.1", "--port", "5", "--policy", "round_robin",
                "--request-timeout-secs", "60", "--balance-abs-threshold", "10",
                "--disable-retries"});
  CHECK(vime::launch::router_flags(parse({}).router, 5) ==
        Strings{"--host", "127.0.0.1", "--port", "5", "--policy", "consistent_hash",
                "--request-timeout-secs", "14400"});
  // The engines it starts with (the Rust vllm-router refuses to start without workers).
  const Strings flags =
      vime::launch::router_flags(parse({}).router, 5, {"http://a:1", "http://b:2"});
  CHECK(Strings(flags.end() - 3, flags.end()) ==
        Strings{"--worker-urls", "http://a:1", "http://b:2"});
}

TEST_CASE("engine_fleet: start 2 stand-in engines, register, restart one, stop", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  vime::test::TempDir dir;
  FakeRouter fake;
  Strings progress;
  EngineFleet fleet(
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "2", "--actor-num-gpus-per-node", "1",
             "--vllm-router-ip", "127.0.0.1", "--vllm-router-port", std::to_string(fake.port())}),
      quick_options(dir, &progress));
  fleet.start();
  const Strings urls = fleet.urls();
  REQUIRE(urls.size() == 2);
  CHECK(fleet.router_url() == "http://127.0.0.1:" + std::to_string(fake.port()));
  CHECK(fake.calls() == Strings{"POST " + urls[0] + " regular", "POST " + urls[1] + " regular"});
  for (const auto& u : urls) CHECK(vime::launch::is_healthy(u));
  // The engines took >= 300 ms and progress comes every 100 ms; how many were healthy by the first
  // line, and after how many seconds, depends on the machine's load.
  CHECK(std::find_if(progress.begin(), progress.end(), [](const std::string& l) {
          return std::regex_match(l, std::regex("waiting for 2 engines: [01]/2 healthy, [0-9]+ s"));
        }) != progress.end());
  const Json info = get_json(urls[1] + "/info");
  CHECK(info.at("cuda").as_string() == "2");
  const Strings argv = [&] {
    Strings out;
    for (const auto& a : info.at("argv").as_array()) out.push_back(a.as_string());
    return out;
  }();
  REQUIRE(argv.size() > 14);
  CHECK(Strings(argv.begin() + 1, argv.begin() + 14) ==
        Strings{"engine", "/m", "--host", "127.0.0.1", "--port", urls[1].substr(17),
                "--tensor-parallel-size", "1", "--seed", "1235", "--dtype", "float32",
                "--logprobs-mode"});

  // Engine 1 dies; restart brings it back on a new port and re-registers it.
  const pid_t old_pid = fleet.process(1)->pid();
  ::kill(old_pid, SIGKILL);
  const std::string new_url = fleet.restart(1);
  CHECK(new_url != urls[1]);
  CHECK(fleet.urls()[1] == new_url);
  CHECK(vime::launch::is_healthy(new_url));
  CHECK_FALSE(process_alive(old_pid));
  CHECK(fake.calls().size() == 4);
  CHECK(fake.calls()[2] == "DELETE " + encoded(urls[1]));
  CHECK(fake.calls()[3] == "POST " + new_url + " regular");

  const pid_t pid0 = fleet.process(0)->pid(), pid1 = fleet.process(1)->pid();
  fleet.stop();
  CHECK_FALSE(process_alive(pid0));
  CHECK_FALSE(process_alive(pid1));
  CHECK(fake.calls().size() == 6);
  CHECK(fake.calls()[4] == "DELETE " + encoded(urls[0]));
  CHECK(fake.calls()[5] == "DELETE " + encoded(new_url));
  fleet.stop();  // twice: nothing more
  CHECK(fake.calls().size() == 6);
}

TEST_CASE("engine_fleet: a launched router gets the engines and stops last", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  env.set("VIME_VLLM_ROUTER_COMMAND", std::string(VIME_LAUNCH_TEST_HELPER) + " router");
  vime::test::TempDir dir;
  EngineFleet fleet(parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "2",
                           "--actor-num-gpus-per-node", "1", "--router-cache-threshold", "0.5"}),
                    quick_options(dir));
  fleet.start();
  REQUIRE_FALSE(fleet.router_url().empty());
  const Json workers = get_json(fleet.router_url() + "/workers").at("workers");
  REQUIRE(workers.size() == 2);
  CHECK(workers.at(0).at("url").as_string() == fleet.urls()[0]);
  CHECK(workers.at(1).at("url").as_string() == fleet.urls()[1]);
  const Json argv = get_json(fleet.router_url() + "/argv");
  CHECK(argv.dump().find(R"("--policy","consistent_hash","--request-timeout-secs","14400",)"
                         R"("--cache-threshold","0.5","--worker-urls",")" +
                         fleet.urls()[0] + R"(",")" + fleet.urls()[1] + "\"") != std::string::npos);
  const std::string router = fleet.router_url();
  fleet.stop();
  CHECK_FALSE(vime::launch::is_healthy(router, 1));
}

TEST_CASE("engine_fleet: each --vllm-config model gets its own launched router", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  env.set("VIME_VLLM_ROUTER_COMMAND", std::string(VIME_LAUNCH_TEST_HELPER) + " router");
  vime::test::TempDir dir;
  const auto file = dir.write("vllm.yaml", R"(vllm:
  - name: judge
    model_path: /judge
    server_groups: [{num_gpus: 1}]
  - name: policy
    server_groups: [{num_gpus: 2}]
)");
  EngineFleet fleet(parse({"--hf-checkpoint", "/m", "--vllm-config", file.string(),
                           "--actor-num-gpus-per-node", "1"}),
                    quick_options(dir));
  fleet.start();
  CHECK(fleet.models() == Strings{"judge", "policy"});
  const Strings judge = fleet.urls("judge"), policy = fleet.urls("policy");
  REQUIRE(judge.size() == 1);
  REQUIRE(policy.size() == 2);
  CHECK(fleet.model_of(judge[0]) == "judge");
  CHECK_FALSE(fleet.updates_weights(judge[0]));
  CHECK(fleet.updates_weights(policy[1]));
  // The rollout router is the policy's; the judge has its own, with only its engine.
  REQUIRE_FALSE(fleet.router_url("judge").empty());
  CHECK(fleet.router_url() == fleet.router_url("policy"));
  CHECK(fleet.router_url("judge") != fleet.router_url("policy"));
  auto workers_of = [&](const std::string& model) {
    Strings out;
    const Json reply = get_json(fleet.router_url(model) + "/workers");  // named: see metrics_file
    for (const auto& w : reply.at("workers").as_array()) out.push_back(w.at("url").as_string());
    return out;
  };
  CHECK(workers_of("policy") == policy);
  CHECK(workers_of("judge") == judge);
  const Json models = fleet.describe_models();
  CHECK(models.at("judge").at("engines").at(0).as_string() == judge[0]);
  CHECK(models.at("judge").at("router").as_string() == fleet.router_url("judge"));
  CHECK_FALSE(models.at("judge").at("update_weights").as_bool());
  CHECK(models.at("policy").at("update_weights").as_bool());
  CHECK(models.at("policy").at("engines").size() == 2);
  const std::string judge_router = fleet.router_url("judge");
  fleet.stop();
  CHECK_FALSE(vime::launch::is_healthy(judge_router, 1));
}

TEST_CASE("engine_fleet: no router installed and none given", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  env.set("LAUNCH_HELPER_DELAY_MS", "0");
  vime::test::TempDir dir;
  EngineFleet fleet(
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "1", "--actor-num-gpus-per-node", "1"}),
      quick_options(dir));
  fleet.start();
  CHECK(fleet.router_url().empty());
  CHECK(fleet.urls().size() == 1);
  const Json models = fleet.describe_models();
  CHECK(models.at("default").at("router").is_null());
  CHECK(models.at("default").at("engines").size() == 1);
}

TEST_CASE("engine_fleet: an engine that exits fails start at once with its log", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  vime::test::TempDir dir;
  EngineFleet fleet(parse({"--hf-checkpoint", "FAIL", "--rollout-num-gpus", "2",
                           "--actor-num-gpus-per-node", "1"}),
                    quick_options(dir));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(fleet.start(),
                    Catch::Contains("engine 0 (http://127.0.0.1:") &&
                        Catch::Contains(") exited with code 3 before it was healthy; its log is " +
                                        (dir.path() / "logs" / "engine-engine-0.log").string() +
                                        ", last lines:\nstand-in engine: cannot load model FAIL"));
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
}

TEST_CASE(
    "engine_fleet: a missing engine or router command, or no engine at all, fails at once naming "
    "what to set",
    "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  vime::test::TempDir dir;
  const auto one_engine =
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "1", "--actor-num-gpus-per-node", "1"});
  const auto t0 = std::chrono::steady_clock::now();
  // No `vllm` on PATH (PATH is /usr/bin:/bin here) and no VIME_VLLM_COMMAND.
  env.set("VIME_VLLM_COMMAND", std::nullopt);
  EngineFleet plain(one_engine, quick_options(dir));
  CHECK_THROWS_WITH(plain.start(),
                    Catch::Contains("cannot start engine 0: 'vllm' is not on PATH") &&
                        Catch::Contains("VIME_VLLM_COMMAND"));
  CHECK(plain.process(0) == nullptr);
  env.set("VIME_VLLM_COMMAND", "/nonexistent/vllm serve");
  EngineFleet pointed(one_engine, quick_options(dir));
  CHECK_THROWS_WITH(pointed.start(),
                    Catch::Contains("VIME_VLLM_COMMAND=\"/nonexistent/vllm serve\": "
                                    "'/nonexistent/vllm' is not an executable file"));
  env.set("VIME_VLLM_COMMAND", std::string(VIME_LAUNCH_TEST_HELPER) + " engine");
  env.set("VIME_VLLM_ROUTER_COMMAND", "/nonexistent/vllm-router");
  EngineFleet routed(one_engine, quick_options(dir));
  CHECK_THROWS_WITH(routed.start(),
                    Catch::Contains("VIME_VLLM_ROUTER_COMMAND=\"/nonexistent/vllm-router\""));
  CHECK(routed.process(0) == nullptr);  // refused before any engine started
  // Nothing to start or use: a UsageError naming the flags, not a wait for engines.
  EngineFleet empty(parse({"--hf-checkpoint", "/m"}), quick_options(dir));
  CHECK_THROWS_AS(empty.start(), vime::UsageError);
  CHECK_THROWS_WITH(empty.start(), Catch::Contains("--rollout-num-gpus N") &&
                                       Catch::Contains("--rollout-external-engine-addrs"));
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
}

TEST_CASE("engine_fleet: a start timeout names the engines and stops them", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  env.set("LAUNCH_HELPER_DELAY_MS", "100000");
  vime::test::TempDir dir;
  auto options = quick_options(dir);
  options.startup_timeout = 400ms;
  EngineFleet fleet(
      parse({"--hf-checkpoint", "/m", "--rollout-num-gpus", "1", "--actor-num-gpus-per-node", "1"}),
      options);
  // One line: the engine, its URL, the step and its log file.
  CHECK_THROWS_WITH(
      fleet.start(),
      Catch::Matches("engine 0 \\(http://127\\.0\\.0\\.1:[0-9]+\\) not healthy after 0 s "
                     "\\(GET /health\\); check " +
                     (dir.path() / "logs").string() + "/engine-engine-0\\.log"));
  REQUIRE(fleet.process(0) != nullptr);
  CHECK_FALSE(fleet.process(0)->is_running());
}

TEST_CASE("engine_fleet: external engines are used as given", "[launch]") {
  EnvGuard env;
  stand_in_env(env);
  env.set("LAUNCH_HELPER_DELAY_MS", "0");
  vime::test::TempDir dir;
  // A stand-in started by the test plays the running external engine.
  vime::launch::ChildSpec spec;
  spec.argv = {VIME_LAUNCH_TEST_HELPER, "engine", "/m", "--port", "0"};
  spec.log_path = dir.path() / "external.log";
  vime::launch::ChildProcess external(spec);
  const int port = vime::test::wait_reported_port(spec.log_path, 60);
  REQUIRE(port > 0);
  FakeRouter fake;
  EngineFleet fleet(
      parse({"--rollout-external-engine-addrs", "127.0.0.1:" + std::to_string(port),
             "--vllm-router-ip", "127.0.0.1", "--vllm-router-port", std::to_string(fake.port())}),
      quick_options(dir));
  fleet.start();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  CHECK(fleet.urls() == Strings{url});
  CHECK(fleet.process(0) == nullptr);
  CHECK(fake.calls() == Strings{"POST " + url + " regular"});
  CHECK_THROWS_WITH(fleet.restart(0), Catch::Contains("is external"));
  fleet.stop();
  CHECK(external.is_running());  // not ours to stop
}

TEST_CASE("server_info: external engines need dev mode, no data parallelism, the run's backend",
          "[launch]") {
  std::string reply;  // the /server_info body; "" -> 404
  httplib::Server server;
  server.Get("/server_info", [&reply](const httplib::Request& req, httplib::Response& res) {
    if (reply.empty() || req.get_param_value("config_format") != "json") {
      res.status = 404;
      return;
    }
    res.set_content(reply, "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(5ms);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  vime::launch::EngineExpectations nccl{"nccl", ""};
  auto error_of = [&](const vime::launch::EngineExpectations& e) -> std::string {
    try {
      vime::launch::check_external_engine(url, e);
    } catch (const vime::Error& error) {
      return error.what();
    }
    return "";
  };

  CHECK_THAT(error_of(nccl), Catch::Contains("external engine " + url) &&
                                 Catch::Contains("VLLM_SERVER_DEV_MODE=1"));
  reply = R"({"vllm_config":{"parallel_config":{"tensor_parallel_size":2,"data_parallel_size":1},)"
          R"("weight_transfer_config":{"backend":"nccl"}}})";
  CHECK(error_of(nccl).empty());
  CHECK_THAT(error_of({"disk", ""}),
             Catch::Contains("backend \"nccl\"") && Catch::Contains("--update-weight-transport"));
  reply = R"({"vllm_config":{"parallel_config":{"data_parallel_size":4}}})";
  CHECK_THAT(error_of(nccl), Catch::Contains("data parallelism 4"));
  reply = R"j({"vllm_config":"VllmConfig(model='/m', ...)"})j";  // an older server: text
  CHECK(error_of(nccl).empty());
  server.stop();
  thread.join();
  // Unreachable: one error naming the engine.
  CHECK_THAT(error_of(nccl), Catch::Contains("external engine " + url));
}
