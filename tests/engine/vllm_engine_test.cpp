// VllmEngine against fake vLLM servers (cpp-httplib on 127.0.0.1) that answer as scripted: the
// /v1/completions fallback, retries (same worker, another worker, deadline), refusals, headers,
// aborts. Against real `vime serve` servers: vllm_engine_serve_test.cpp.
#include "vime/engine/vllm_engine.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "http/local_server.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

using vime::GenerateRequest;
using vime::Json;
using vime::engine::VllmEngine;
using vime::engine::VllmEngineOptions;
using Clock = std::chrono::steady_clock;

namespace {

// A fake vLLM: /inference/v1/generate answers as `script` says for the n-th request (0-based);
// the response echoes the prompt's ids (reversed) as the output.
struct FakeVllm {
  using Script = std::function<int(int n, const httplib::Request&, Json& response)>;

  explicit FakeVllm(Script s, bool has_generate = true) : script(std::move(s)) {
    if (has_generate) {
      server.http.Post(
          "/inference/v1/generate",
          [this](const httplib::Request& req, httplib::Response& res) { answer(req, res, false); });
    }
    server.http.Post("/v1/completions", [this](const httplib::Request& req,
                                               httplib::Response& res) { answer(req, res, true); });
    server.start();
  }

  void answer(const httplib::Request& req, httplib::Response& res, bool completions) {
    const Json body = Json::parse(req.body);
    std::vector<int32_t> out;
    for (const auto& v : body.at(completions ? "prompt" : "token_ids").as_array()) {
      out.insert(out.begin(), static_cast<int32_t>(v.as_int()));
    }
    Json choice = Json::Object{{"index", 0}, {"finish_reason", "stop"}, {"token_ids", out}};
    Json logprobs = Json::array();
    for (size_t i = 0; i < out.size(); ++i) logprobs.push_back(-0.5 * static_cast<double>(i));
    choice["logprobs"] = Json::Object{{"token_logprobs", logprobs}};
    Json response =
        Json::Object{{"choices", Json::Array{choice}},
                     {"usage", Json::Object{{"prompt_tokens", static_cast<int64_t>(out.size())}}}};
    int n = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      n = hits++;
      bodies.push_back(body);
      headers.push_back(req.headers);
      paths.push_back(req.path);
    }
    const int status = script(n, req, response);
    res.status = status;
    res.set_content(response.dump(), "application/json");
  }

  std::string url() const { return server.url(); }
  int count() {
    std::lock_guard<std::mutex> lock(mutex);
    return hits;
  }

  Script script;
  vime::test::LocalServer server{32};
  std::mutex mutex;
  int hits = 0;
  std::vector<Json> bodies;
  std::vector<httplib::Headers> headers;
  std::vector<std::string> paths;
};

int ok(int, const httplib::Request&, Json&) { return 200; }

void set_finish(Json& response, const std::string& reason) {
  Json choice = response.at("choices").at(size_t{0});
  choice["finish_reason"] = reason;
  response["choices"] = Json::Array{choice};
}

VllmEngineOptions options_for(const std::vector<std::string>& urls) {
  VllmEngineOptions o;
  o.worker_urls = urls;
  o.retry_backoff_s = 0.01;
  o.retry_backoff_max_s = 0.05;
  o.retry_deadline_s = 20;
  o.request_timeout_s = 20;
  o.abort_sweep_s = 0.5;
  return o;
}

GenerateRequest request(std::vector<int32_t> ids, std::string session = "") {
  GenerateRequest r;
  r.input_ids = std::move(ids);
  r.sampling_params.max_new_tokens = 8;
  r.sampling_params.seed = 7;
  r.session_id = std::move(session);
  return r;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TEST_CASE("VllmEngine: 404 on /inference/v1/generate falls back to /v1/completions",
          "[vllm_engine]") {
  FakeVllm fake(ok, /*has_generate=*/false);
  VllmEngine engine(options_for({fake.url()}));
  auto r = engine.generate(request({1, 2, 3}));
  CHECK(r.output_ids == std::vector<int32_t>{3, 2, 1});
  CHECK(r.output_log_probs == std::vector<float>{0.0f, -0.5f, -1.0f});
  CHECK(r.finish_reason == "stop");
  CHECK(r.prompt_tokens == 3);
  r = engine.generate(request({4, 5}));
  CHECK(r.output_ids == std::vector<int32_t>{5, 4});
  CHECK(fake.count() == 2);  // the 404 is httplib's own, not counted; no second 404 try
  CHECK(fake.bodies[0].at("return_token_ids").as_bool());
  const auto stats = engine.stats();
  REQUIRE(stats.workers.size() == 1);
  CHECK(stats.workers[0].uses_completions);
  CHECK(stats.retries == 0);
}

TEST_CASE("VllmEngine: 503 twice then 200 succeeds after retries with the same request",
          "[vllm_engine]") {
  FakeVllm fake([](int n, const httplib::Request&, Json& response) {
    if (n < 2) {
      response = Json::Object{{"error", Json::Object{{"message", "overloaded"}}}};
      return 503;
    }
    return 200;
  });
  VllmEngine engine(options_for({fake.url()}));
  const auto r = engine.generate(request({1, 2}));
  CHECK(r.output_ids == std::vector<int32_t>{2, 1});
  CHECK(fake.count() == 3);
  CHECK(fake.bodies[0] == fake.bodies[2]);  // same seed, same body
  CHECK(fake.bodies[0].at("sampling_params").at("seed").as_int() == 7);
  CHECK(engine.stats().retries == 2);
}

TEST_CASE("VllmEngine: finish_reason error and an abort vime did not ask for are retried",
          "[vllm_engine]") {
  FakeVllm fake([](int n, const httplib::Request&, Json& response) {
    if (n == 0) set_finish(response, "error");
    if (n == 1) set_finish(response, "abort");
    return 200;
  });
  VllmEngine engine(options_for({fake.url()}));
  CHECK(engine.generate(request({1, 2})).finish_reason == "stop");
  CHECK(fake.count() == 3);
}

TEST_CASE("VllmEngine: a 400 throws vime::Error at once with vLLM's message", "[vllm_engine]") {
  FakeVllm fake([](int, const httplib::Request&, Json& response) {
    response = Json::Object{{"object", "error"}, {"message", "max_tokens is too large"}};
    return 400;
  });
  VllmEngine engine(options_for({fake.url()}));
  CHECK_THROWS_WITH(engine.generate(request({1})),
                    Catch::Contains(fake.url() + "/inference/v1/generate") &&
                        Catch::Contains("HTTP 400: max_tokens is too large"));
  CHECK(fake.count() == 1);
}

TEST_CASE("VllmEngine: api key, session header and model are sent", "[vllm_engine]") {
  FakeVllm fake([](int, const httplib::Request& req, Json&) {
    return req.get_header_value("Authorization") == "Bearer sk-test" ? 200 : 401;
  });
  auto o = options_for({fake.url()});
  o.api_key = "sk-test";
  o.model_name = "Qwen/Qwen3-8B";
  VllmEngine engine(o);
  CHECK(engine.generate(request({9}, "sample-3")).output_ids == std::vector<int32_t>{9});
  REQUIRE(fake.count() == 1);
  CHECK(fake.bodies[0].at("model").as_string() == "Qwen/Qwen3-8B");
  CHECK(fake.headers[0].find("x-session-id")->second == "sample-3");

  VllmEngine no_key(options_for({fake.url()}));  // 401 is a refusal, not retried
  CHECK_THROWS_WITH(no_key.generate(request({9})), Catch::Contains("HTTP 401"));
}

TEST_CASE("VllmEngine: a failing worker's requests go to the other one", "[vllm_engine]") {
  FakeVllm bad([](int, const httplib::Request&, Json&) { return 502; });
  FakeVllm good(ok);
  auto o = options_for({bad.url(), good.url()});
  o.policy = "round_robin";
  VllmEngine engine(o);
  for (int i = 0; i < 10; ++i) {
    CHECK(engine.generate(request({i + 1})).output_ids == std::vector<int32_t>{i + 1});
  }
  CHECK(good.count() == 10);
  CHECK(bad.count() == 1);  // avoided after its first failure
  CHECK(engine.stats().retries == 1);
}

TEST_CASE("VllmEngine: refused connections are retried until the deadline, then an Error",
          "[vllm_engine]") {
  std::string dead_url;
  {
    vime::test::LocalServer gone;
    gone.start();
    dead_url = gone.url();
  }
  auto o = options_for({dead_url});
  o.retry_deadline_s = 0.5;
  VllmEngine engine(o);
  const auto start = Clock::now();
  CHECK_THROWS_WITH(engine.generate(request({1})), Catch::Contains(dead_url) &&
                                                       Catch::Contains("retry deadline") &&
                                                       Catch::Contains("last error"));
  CHECK(seconds_since(start) < 30);  // the 0.5 s deadline, not the endless retries without it
  CHECK(engine.stats().retries >= 2);
}

TEST_CASE("VllmEngine: abort_all ends a request waiting to retry with abort", "[vllm_engine]") {
  FakeVllm fake([](int, const httplib::Request&, Json&) { return 503; });
  auto o = options_for({fake.url()});
  o.retry_backoff_s = 120;  // waits long before its retry
  o.retry_backoff_max_s = 120;
  o.retry_deadline_s = 600;
  VllmEngine engine(o);
  auto pending = std::async(std::launch::async, [&] { return engine.generate(request({1})); });
  while (engine.stats().retries == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto start = Clock::now();
  engine.abort_all();
  const auto r = pending.get();
  CHECK(r.finish_reason == "abort");
  CHECK(r.output_ids.empty());
  CHECK(seconds_since(start) < 60);  // not the 120 s backoff: the abort woke it
}

TEST_CASE("VllmEngine: abort_all closes the connections of a worker without /pause",
          "[vllm_engine]") {
  std::atomic<bool> release{false};
  FakeVllm fake([&](int, const httplib::Request&, Json&) {
    for (int i = 0; i < 24000 && !release; ++i)  // holds the request up to 120 s
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return 200;
  });
  VllmEngine engine(options_for({fake.url()}));
  std::vector<std::future<vime::GenerateResponse>> pending;
  for (int i = 0; i < 4; ++i) {
    pending.push_back(
        std::async(std::launch::async, [&, i] { return engine.generate(request({i + 1})); }));
  }
  while (fake.count() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto start = Clock::now();
  engine.abort_all();                // /pause is 404 here
  CHECK(seconds_since(start) < 60);  // not the handlers' 120 s: the connections were closed
  for (auto& p : pending) {
    const auto r = p.get();
    CHECK(r.finish_reason == "abort");
    CHECK(r.output_ids.empty());
  }
  CHECK(engine.stats().in_flight == 0);
  release = true;
  // Later requests run normally.
  CHECK(engine.generate(request({5, 6})).output_ids == std::vector<int32_t>{6, 5});
}

TEST_CASE("VllmEngine: options from reads the router policy, concurrency and timeout",
          "[vllm_engine]") {
  vime::Args args;
  args.set("router_policy", "round_robin", vime::ArgSource::kCommandLine, "--vllm-router-policy");
  args.set("vllm_server_concurrency", 7, vime::ArgSource::kCommandLine);
  args.set("router_request_timeout_secs", 99, vime::ArgSource::kCommandLine);
  args.router_passthrough().push_back({"--router-api-key", {"router-key"}});
  args.vllm_passthrough().push_back({"--vllm-api-key", {"sk-engine"}});
  auto o = VllmEngineOptions::from(args);
  o.worker_urls = {"http://a:1"};
  o.router_url = "http://r:2";
  CHECK(o.policy == "round_robin");
  CHECK(o.concurrency_per_worker == 7);
  CHECK(o.request_timeout_s == 99);
  CHECK(o.worker_urls == std::vector<std::string>{"http://a:1"});
  CHECK(o.router_url == "http://r:2");
  CHECK(o.api_key == "sk-engine");
  auto bad = o;
  bad.policy = "fastest";
  CHECK_THROWS_AS(VllmEngine(bad), vime::UsageError);
}

TEST_CASE("VllmEngine: with a router, generation goes through it", "[vllm_engine]") {
  FakeVllm router(ok);
  auto o = options_for({});
  o.router_url = router.url() + "/";
  VllmEngine engine(o);
  CHECK(engine.generate(request({1, 2}, "s")).output_ids == std::vector<int32_t>{2, 1});
  REQUIRE(router.count() == 1);
  CHECK(router.paths[0] == "/inference/v1/generate");
  CHECK(router.headers[0].find("x-session-id")->second == "s");
  CHECK(engine.workers().empty());
  CHECK(engine.stats().workers.at(0).url == router.url());
  CHECK(engine.stats().workers.at(0).served == 1);
}

TEST_CASE("VllmEngine: workers can be added and removed", "[vllm_engine]") {
  FakeVllm fake(ok);
  auto o = options_for({});
  o.retry_deadline_s = 0.3;
  VllmEngine engine(o);
  CHECK_THROWS_WITH(engine.generate(request({1})),
                    Catch::Contains("no vLLM worker had a free slot"));
  engine.add_worker(fake.url());
  engine.add_worker(fake.url() + "/");  // the same worker
  CHECK(engine.workers() == std::vector<std::string>{fake.url()});
  CHECK(engine.generate(request({3})).output_ids == std::vector<int32_t>{3});
  engine.set_weight_version("12");
  CHECK(engine.generate(request({3})).weight_version == "12");
  engine.remove_worker(fake.url());
  CHECK(engine.workers().empty());
  CHECK_THROWS_AS(engine.generate(request({1})), vime::Error);
}

TEST_CASE("VllmEngine: pause on a worker without the dev-mode routes is an Error",
          "[vllm_engine]") {
  FakeVllm fake(ok);
  VllmEngine engine(options_for({fake.url()}));
  CHECK_THROWS_WITH(engine.pause("keep"), Catch::Contains(fake.url() + "/pause?mode=keep") &&
                                              Catch::Contains("VLLM_SERVER_DEV_MODE"));
  CHECK_THROWS_WITH(engine.resume(), Catch::Contains(fake.url() + "/resume"));
  CHECK_THROWS_AS(engine.pause("later"), vime::Error);
}

TEST_CASE("VllmEngine: at most concurrency_per_worker requests per worker are in flight",
          "[vllm_engine]") {
  std::atomic<int> current{0};
  std::atomic<int> peak{0};
  std::atomic<bool> release{false};
  FakeVllm fake([&](int, const httplib::Request&, Json&) {
    const int now = ++current;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --current;
    return 200;
  });
  auto o = options_for({fake.url()});
  o.concurrency_per_worker = 2;
  VllmEngine engine(o);
  std::vector<std::future<vime::GenerateResponse>> pending;
  for (int i = 0; i < 6; ++i) {
    pending.push_back(
        std::async(std::launch::async, [&, i] { return engine.generate(request({i + 1})); }));
  }
  auto stats = engine.stats();
  for (int i = 0; i < 5000 && (stats.waiting < 4 || fake.count() < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    stats = engine.stats();
  }
  CHECK(stats.in_flight == 2);
  CHECK(stats.waiting == 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(fake.count() == 2);  // the other four wait for a slot
  release = true;
  for (int i = 0; i < 6; ++i) CHECK(pending[i].get().output_ids == std::vector<int32_t>{i + 1});
  CHECK(peak.load() == 2);
  CHECK(fake.count() == 6);
}
