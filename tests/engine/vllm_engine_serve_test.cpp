// VllmEngine against TWO real in-process `vime serve` servers (each a NativeEngine on the tiny
// CPU model with the real Qwen3 tokenizer): results equal the engine's own, balancing, session
// affinity, abort under load, and a server stopped mid-load losing no request.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "serve/served_engine.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/vllm_engine.hpp"
#include "vime/serve/server.hpp"

using vime::GenerateRequest;
using vime::GenerateResponse;
using vime::engine::NativeEngine;
using vime::engine::VllmEngine;
using vime::engine::VllmEngineOptions;

namespace {

const vime::Tokenizer& qwen() { return vime::test::served_tokenizer(); }
using Served = vime::test::ServedEngine;

// Two servers and a VllmEngine over them.
struct Pair {
  explicit Pair(const std::string& policy = "consistent_hash") {
    VllmEngineOptions o;
    o.worker_urls = {a.url(), b.url()};
    o.policy = policy;
    o.model_name = "tiny-qwen3";
    o.retry_backoff_s = 0.01;
    o.retry_backoff_max_s = 0.1;
    o.retry_deadline_s = 60;
    o.request_timeout_s = 120;
    o.abort_sweep_s = 1;
    engine = std::make_unique<VllmEngine>(o);
  }
  int64_t served(size_t worker) const { return engine->stats().workers.at(worker).served; }
  Served a;
  Served b;
  std::unique_ptr<VllmEngine> engine;
};

GenerateRequest make(const std::string& text, int64_t max_tokens, std::string session = "",
                     double temperature = 0.0, int64_t seed = 1) {
  GenerateRequest r = vime::test::make_request(qwen().encode(text), max_tokens, temperature, seed);
  r.session_id = std::move(session);
  return r;
}

template <class F>
std::vector<GenerateResponse> run_all(int n, F make_request, VllmEngine& engine) {
  std::vector<std::future<GenerateResponse>> pending;
  for (int i = 0; i < n; ++i) {
    pending.push_back(
        std::async(std::launch::async, [&, i] { return engine.generate(make_request(i)); }));
  }
  std::vector<GenerateResponse> out;
  for (auto& p : pending) out.push_back(p.get());
  return out;
}

bool wait_until(const std::function<bool()>& done, double seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

}  // namespace

TEST_CASE("VllmEngine over vime serve: greedy results equal the NativeEngine's own",
          "[vllm_engine]") {
  Pair pair;
  for (const char* text : {"The capital of France is", "1 + 1 =", "Once upon a time"}) {
    const GenerateRequest request = make(text, 8);
    const GenerateResponse direct = pair.a.engine.generate(request);
    const GenerateResponse remote = pair.engine->generate(request);
    CAPTURE(text);
    CHECK(remote.output_ids == direct.output_ids);
    CHECK(remote.finish_reason == direct.finish_reason);
    CHECK(remote.prompt_tokens == static_cast<int64_t>(request.input_ids.size()));
    REQUIRE(remote.output_log_probs.size() == direct.output_log_probs.size());
    for (size_t i = 0; i < direct.output_log_probs.size(); ++i) {
      CHECK(remote.output_log_probs[i] == Approx(direct.output_log_probs[i]).margin(1e-5));
    }
  }
}

TEST_CASE("VllmEngine over vime serve: sessions spread over both workers and stick to one",
          "[vllm_engine]") {
  Pair pair;
  const auto spread = run_all(
      16, [](int i) { return make("Count: " + std::to_string(i), 4, "s" + std::to_string(i)); },
      *pair.engine);
  for (const auto& r : spread) CHECK(r.output_ids.size() == 4);
  CHECK(pair.served(0) > 0);
  CHECK(pair.served(1) > 0);
  CHECK(pair.served(0) + pair.served(1) == 16);

  const int64_t a0 = pair.served(0);
  const int64_t b0 = pair.served(1);
  for (int turn = 0; turn < 6; ++turn)
    pair.engine->generate(make("turn " + std::to_string(turn), 2, "same"));
  const int64_t da = pair.served(0) - a0;
  const int64_t db = pair.served(1) - b0;
  CHECK(((da == 6 && db == 0) || (da == 0 && db == 6)));
}

TEST_CASE("VllmEngine over vime serve: abort_all under load returns every request",
          "[vllm_engine]") {
  Pair pair("round_robin");
  constexpr int kRequests = 64;
  std::vector<std::future<GenerateResponse>> pending;
  for (int i = 0; i < kRequests; ++i) {
    pending.push_back(std::async(std::launch::async, [&, i] {
      return pair.engine->generate(make("Story " + std::to_string(i), 400, "", 1.0, i + 1));
    }));
  }
  REQUIRE(wait_until([&] {
    return pair.a.engine.stats().decode_steps > 3 && pair.b.engine.stats().decode_steps > 3;
  }));
  pair.engine->abort_all();
  CHECK(pair.engine->stats().in_flight == 0);
  int aborted = 0;
  int with_tokens = 0;
  for (auto& p : pending) {
    const auto r = p.get();  // none lost, none throws
    CHECK(r.output_log_probs.size() == r.output_ids.size());
    if (r.finish_reason == "abort") {
      ++aborted;
      with_tokens += !r.output_ids.empty();
    }
  }
  CHECK(aborted > 0);
  CHECK(with_tokens > 0);
  // The workers were resumed: the engine generates again.
  CHECK(pair.engine->generate(make("again", 3)).output_ids.size() == 3);
}

TEST_CASE("VllmEngine over vime serve: a server stopped mid-load loses no request",
          "[vllm_engine]") {
  Pair pair("round_robin");
  constexpr int kRequests = 16;
  std::vector<std::future<GenerateResponse>> pending;
  for (int i = 0; i < kRequests; ++i) {
    pending.push_back(std::async(std::launch::async, [&, i] {
      return pair.engine->generate(make("Item " + std::to_string(i), 32));
    }));
  }
  REQUIRE(wait_until([&] { return pair.a.engine.stats().decode_steps > 2; }));
  pair.a.server.stop();  // its requests end "abort", then it refuses connections
  for (int i = 0; i < kRequests; ++i) {
    const auto r = pending[i].get();
    CAPTURE(i);
    CHECK(r.finish_reason != "abort");
    CHECK(!r.output_ids.empty());
    if (i % 4 == 0) {  // greedy: the same tokens as the surviving engine's own run
      CHECK(r.output_ids ==
            pair.b.engine.generate(make("Item " + std::to_string(i), 32)).output_ids);
    }
  }
  CHECK(pair.engine->stats().retries > 0);
  CHECK(pair.engine->stats().workers.at(0).failures > 0);
}

TEST_CASE("VllmEngine over vime serve: pause(keep) holds requests until resume", "[vllm_engine]") {
  Pair pair;
  pair.engine->pause("keep");
  auto pending =
      std::async(std::launch::async, [&] { return pair.engine->generate(make("x", 3)); });
  REQUIRE(
      wait_until([&] { return pair.a.engine.stats().queued + pair.b.engine.stats().queued == 1; }));
  CHECK(pending.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  pair.engine->resume();
  const auto r = pending.get();
  CHECK(r.finish_reason == "length");
  CHECK(r.output_ids.size() == 3);
}
