// The embedded engines of several ranks, in one process: two tiny Qwen3-shaped CPU models with the
// same weights (one per "rank"), the real Qwen3 tokenizer, a real c10d TCPStore on 127.0.0.1 and
// rank 1's engine behind real HTTP. Rank 0's fleet gives the samples one NativeEngine gives, keeps
// groups on one rank, uses both ranks, aborts both and survives a dead rank without losing a
// sample.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "engine/engine_fixtures.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/engine/engine_balancer.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/vllm_engine.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/loop/native_backend.hpp"
#include "vime/loop/rank_engines.hpp"

using vime::GenerateRequest;
using vime::GenerateResponse;

namespace {

const vime::Tokenizer& qwen() { return vime::test::real_tokenizer("qwen3"); }

// One model per rank; the same seed gives both the same weights, as DP replicas have.
vime::Model& rank_model(int rank) {
  static auto m0 = vime::test::tiny_engine_model(at::kFloat, at::kCPU);
  static auto m1 = vime::test::tiny_engine_model(at::kFloat, at::kCPU);
  return rank == 0 ? *m0 : *m1;
}

// A rank's view of the job for the backend: the store is real; collectives are not used by it.
class StoreOnlyGroup final : public vime::dist::ProcessGroup {
 public:
  StoreOnlyGroup(c10::intrusive_ptr<c10d::Store> store, int rank, int size)
      : store_(std::move(store)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const at::Device& device() const override { return device_; }
  c10d::Store& store() override { return *store_; }
  void all_reduce(std::vector<at::Tensor>&, vime::dist::ReduceOp) override { no(); }
  void broadcast(std::vector<at::Tensor>&, int) override { no(); }
  void all_gather(std::vector<at::Tensor>&, const at::Tensor&) override { no(); }
  void reduce_scatter(at::Tensor&, const at::Tensor&) override { no(); }
  void all_to_all(at::Tensor&, const at::Tensor&, const std::vector<int64_t>&,
                  const std::vector<int64_t>&) override {
    no();
  }
  void barrier() override { no(); }

 private:
  [[noreturn]] static void no() { throw vime::Error("StoreOnlyGroup: no collectives here"); }
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  at::Device device_{at::kCPU};
};

// A TCPStore hosted on 127.0.0.1 and a second client of it (rank 0 hosts, rank 1 connects).
struct Stores {
  Stores() {
    c10d::TCPStoreOptions o;
    o.port = 0;  // any free port: the client asks the host which one it bound
    o.isServer = true;
    o.numWorkers = 2;
    o.waitWorkers = false;
    o.timeout = std::chrono::seconds(30);
    host = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
    o.port = host->getPort();
    o.isServer = false;
    client = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
  }
  c10::intrusive_ptr<c10d::TCPStore> host;
  c10::intrusive_ptr<c10d::Store> client;
};

GenerateRequest request(const std::string& text, int64_t tokens, const std::string& group,
                        double temperature = 0.0, int64_t seed = -1) {
  GenerateRequest r = vime::test::make_request(qwen().encode(text), tokens, temperature, seed);
  r.group_id = group;
  return r;
}

// Runs every request at once (as the rollout's workers do); responses in request order.
std::vector<GenerateResponse> run_all(vime::EngineClient& engine,
                                      const std::vector<GenerateRequest>& requests) {
  std::vector<std::future<GenerateResponse>> pending;
  for (const auto& r : requests) {
    pending.push_back(std::async(std::launch::async, [&engine, r] { return engine.generate(r); }));
  }
  std::vector<GenerateResponse> out;
  for (auto& p : pending) out.push_back(p.get());
  return out;
}

// `groups` GRPO groups of `n` samples: greedy ones, and seeded samples at temperature 0.8.
std::vector<GenerateRequest> grpo_requests(int groups, int n, int64_t tokens) {
  std::vector<GenerateRequest> out;
  for (int g = 0; g < groups; ++g) {
    for (int i = 0; i < n; ++i) {
      const std::string n = std::to_string(g);
      const std::string text = "Question " + n + ": what is " + n + " + " + n + "?";
      const std::string group = "g" + n;
      out.push_back(g % 2 == 0 ? request(text, tokens, group)
                               : request(text, tokens, group, 0.8, 100 + i));
    }
  }
  return out;
}

bool wait_until(const std::function<bool()>& done, double seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

vime::engine::BalancerMemberStats member(vime::engine::EngineBalancer& fleet, size_t i) {
  return fleet.stats().at(i);
}

}  // namespace

TEST_CASE("dist rollout: two ranks give one engine's samples, groups whole on one rank",
          "[dist_rollout]") {
  const auto args = vime::core::parse_args({});
  Stores stores;
  StoreOnlyGroup rank0(stores.host, 0, 2);
  StoreOnlyGroup rank1(stores.client, 1, 2);
  // Rank 1 first would not be needed (rank 0 waits for it), but keeps the test single-threaded.
  auto backend1 = vime::loop::make_native_backend(args, rank_model(1), &qwen(), 3, &rank1);
  auto backend0 = vime::loop::make_native_backend(args, rank_model(0), &qwen(), 3, &rank0);
  CHECK(backend0->describe() == "embedded engines on 2 ranks");
  CHECK_THAT(backend1->describe(), Catch::Contains("embedded engine of rank 1, serving rank 0 at "
                                                   "http://127.0.0.1:"));
  CHECK_THROWS_WITH(backend1->engine(), Catch::Contains("only rank 0 generates rollouts"));
  auto* fleet = dynamic_cast<vime::engine::EngineBalancer*>(&backend0->engine());
  REQUIRE(fleet != nullptr);

  // Rank 1 runs a newer version for a moment, so each response says which rank generated it.
  backend1->update_weights(rank_model(1), 4);
  const auto requests = grpo_requests(8, 4, 6);
  const auto responses = run_all(*fleet, requests);

  vime::engine::NativeEngine single(rank_model(0), &qwen(), {});
  const auto expected_all = run_all(single, requests);
  std::map<std::string, std::set<std::string>> ranks_of_group;
  std::set<std::string> versions;
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    const auto& expected = expected_all[i];
    CHECK(responses[i].output_ids == expected.output_ids);
    CHECK(responses[i].finish_reason == expected.finish_reason);
    REQUIRE(responses[i].output_log_probs.size() == expected.output_log_probs.size());
    for (size_t t = 0; t < expected.output_log_probs.size(); ++t) {
      CHECK(responses[i].output_log_probs[t] == Approx(expected.output_log_probs[t]).margin(1e-4));
    }
    ranks_of_group[requests[i].group_id].insert(responses[i].weight_version);
    versions.insert(responses[i].weight_version);
  }
  for (const auto& [group, ranks] : ranks_of_group) {
    CAPTURE(group);
    CHECK(ranks.size() == 1);  // the whole group on one rank
  }
  CHECK(versions == std::set<std::string>{"3", "4"});  // both ranks generated
  CHECK(member(*fleet, 0).served + member(*fleet, 1).served == 32);
  CHECK(member(*fleet, 0).groups + member(*fleet, 1).groups == 8);

  // update_weights on every rank: every response carries the new version.
  for (auto* b : {backend0.get(), backend1.get()}) b->before_train();
  backend0->update_weights(rank_model(0), 5);
  backend1->update_weights(rank_model(1), 5);
  for (const auto& r : run_all(*fleet, grpo_requests(4, 2, 3))) CHECK(r.weight_version == "5");
}

TEST_CASE("dist rollout: abort_all reaches every rank", "[dist_rollout]") {
  const auto args = vime::core::parse_args({});
  Stores stores;
  StoreOnlyGroup rank0(stores.host, 0, 2);
  StoreOnlyGroup rank1(stores.client, 1, 2);
  auto backend1 = vime::loop::make_native_backend(args, rank_model(1), &qwen(), 1, &rank1);
  auto backend0 = vime::loop::make_native_backend(args, rank_model(0), &qwen(), 1, &rank0);
  auto& fleet = dynamic_cast<vime::engine::EngineBalancer&>(backend0->engine());

  std::vector<GenerateRequest> requests;
  for (int g = 0; g < 8; ++g) {
    const std::string n = std::to_string(g);
    auto r = request("Tell a long story " + n, 900, "g" + n);
    r.sampling_params.min_new_tokens = 900;  // no early EOS: still running at the abort
    requests.push_back(r);
  }
  auto pending = std::async(std::launch::async, [&] { return run_all(fleet, requests); });
  REQUIRE(
      wait_until([&] { return member(fleet, 0).in_flight > 0 && member(fleet, 1).in_flight > 0; }));
  // Sent is not arrived: the abort must find rank 1's requests running in its engine (its server's
  // /metrics), or it would end nothing there and they would run to "length".
  const auto rank1_engine =
      vime::loop::wait_for_rank_engines(*stores.host, 2, std::chrono::seconds(5));
  REQUIRE(rank1_engine.size() == 1);
  REQUIRE(wait_until([&] {
    auto r = vime::http::fetch(vime::http::Request::get(rank1_engine[0].url + "/metrics", 5)
                                   .bearer(rank1_engine[0].api_key));
    std::smatch m;
    static const std::regex running(R"(vllm:num_requests_running\{[^}]*\} ([0-9]+))");
    return r.ok() && std::regex_search(r.body, m, running) && std::stoi(m[1].str()) > 0;
  }));
  fleet.abort_all();
  const auto responses = pending.get();
  // Unaborted, rank 1's requests would have run to "length".
  for (const auto& r : responses) {
    CHECK(r.finish_reason == "abort");
    CHECK(r.output_ids.size() < 900);
  }
  CHECK(member(fleet, 1).served > 0);
  // Both ranks generate again after the abort.
  const auto again = run_all(fleet, grpo_requests(4, 1, 3));
  for (const auto& r : again) CHECK(r.finish_reason == "length");
}

TEST_CASE("dist rollout: a rank whose server dies mid-rollout loses no sample", "[dist_rollout]") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  vime::engine::NativeEngine local(rank_model(0), &qwen(), {});
  vime::engine::NativeEngine remote_engine(rank_model(1), &qwen(), {});
  auto server = std::make_unique<vime::loop::RankEngineServer>(remote_engine, rank_model(1), qwen(),
                                                               *store, 1, "127.0.0.1", 64);
  const auto addresses = vime::loop::wait_for_rank_engines(*store, 2, std::chrono::seconds(5));
  REQUIRE(addresses.size() == 1);
  CHECK(addresses[0].url == server->address().url);

  vime::engine::VllmEngineOptions o;
  o.worker_urls = {addresses[0].url};
  o.api_key = addresses[0].api_key;
  o.retry_backoff_s = 0.01;
  o.retry_backoff_max_s = 0.1;
  o.retry_deadline_s = 1;
  vime::engine::EngineBalancer fleet;
  fleet.add("rank 0", local);
  fleet.add("rank 1", std::make_unique<vime::engine::VllmEngine>(o));

  auto requests = grpo_requests(6, 2, 48);
  for (auto& r : requests) r.sampling_params.min_new_tokens = 48;  // still running at the stop
  auto pending = std::async(std::launch::async, [&] { return run_all(fleet, requests); });
  REQUIRE(wait_until([&] { return remote_engine.stats().decode_steps > 2; }));
  server.reset();  // rank 1 is gone: its requests end, then its port refuses connections
  const auto responses = pending.get();
  const auto expected = run_all(local, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    CHECK(responses[i].finish_reason != "abort");
    CHECK(responses[i].output_ids == expected[i].output_ids);
  }
  CHECK(member(fleet, 1).failures > 0);  // its requests went to rank 0
  CHECK(member(fleet, 0).served + member(fleet, 1).served == static_cast<int64_t>(requests.size()));
}

TEST_CASE("dist rollout: rank 0 names the ranks that never published an engine", "[dist_rollout]") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  vime::engine::NativeEngine engine(rank_model(1), &qwen(), {});
  vime::loop::RankEngineServer server(engine, rank_model(1), qwen(), *store, 1, "127.0.0.1", 4);
  CHECK_THROWS_WITH(vime::loop::wait_for_rank_engines(*store, 4, std::chrono::milliseconds(200)),
                    Catch::Contains("2 of 3 other ranks did not publish") &&
                        Catch::Contains("within 0.2 s") && Catch::Contains("missing ranks: 2, 3"));
  // Without its key, the rank's server refuses the request (not retried).
  vime::engine::VllmEngineOptions o;
  o.worker_urls = {server.address().url};
  vime::engine::VllmEngine no_key(o);
  CHECK_THROWS_WITH(no_key.generate(request("hi", 2, "")), Catch::Contains("401"));
}

TEST_CASE("dist rollout: the address a rank advertises", "[dist_rollout]") {
  CHECK(vime::http::local_address_toward("127.0.0.1") == "127.0.0.1");
  CHECK(vime::http::is_loopback("127.0.0.1"));
  CHECK_FALSE(vime::http::is_loopback("10.0.0.1"));
  auto hash = c10::make_intrusive<c10d::HashStore>();
  CHECK(vime::loop::advertised_host(*hash) == "127.0.0.1");
  Stores stores;
  CHECK(vime::loop::advertised_host(*stores.client) == "127.0.0.1");
  CHECK_THROWS_AS(vime::http::local_address_toward("no-such-host.invalid"), vime::Error);
}
