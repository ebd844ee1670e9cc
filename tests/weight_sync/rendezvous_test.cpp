// The CPU-testable parts of the NCCL path: vLLM's TCPStore rendezvous through a real c10d TCPStore,
// and the clear errors where NCCL or CUDA is missing.
#include <ATen/ATen.h>
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/weight_sync/nccl_weight_receiver.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"

using vime::Json;
using namespace vime::weight_sync;

TEST_CASE("weight_sync: the TCPStore host publishes the unique id every receiver reads",
          "[weight_sync]") {
  NcclUniqueId id;
  std::mt19937 rng(3);
  for (auto& c : id.internal) c = char(rng() & 0xff);
  const int port = vime::http::free_port(vime::weight_sync::kAnyAddress);
  const int world = 3;  // the host and two receivers
  // The host's constructor waits for every rank, so the receivers connect from threads.
  auto r1 =
      std::async(std::launch::async, [&] { return fetch_unique_id("127.0.0.1", port, world, 30); });
  auto r2 =
      std::async(std::launch::async, [&] { return fetch_unique_id("127.0.0.1", port, world, 30); });
  TcpStoreHost host(port, world, id, 30);
  CHECK(host.port() == port);
  CHECK(std::string(r1.get().internal, 128) == std::string(id.internal, 128));
  CHECK(std::string(r2.get().internal, 128) == std::string(id.internal, 128));
}

TEST_CASE("weight_sync: a receiver that finds no TCPStore says where it looked", "[weight_sync]") {
  const int port = vime::http::free_port(vime::weight_sync::kAnyAddress);
  CHECK_THROWS_WITH(fetch_unique_id("127.0.0.1", port, 2, 1),
                    Catch::Contains("127.0.0.1:" + std::to_string(port)));
}

TEST_CASE("weight_sync: the nccl receiver refuses a device that is not CUDA", "[weight_sync]") {
  CHECK_THROWS_WITH(make_nccl_weight_receiver(Json::parse(R"({"backend":"nccl","device":"cpu"})")),
                    Catch::Contains("CUDA") && Catch::Contains("disk"));
}

TEST_CASE(
    "weight_sync: connect asks every server's world size, then fails clearly without "
    "NCCL/CUDA",
    "[weight_sync]") {
  httplib::Server server;
  std::atomic<int> world_size_calls{0};
  std::string query;
  server.Get("/get_world_size", [&](const httplib::Request& req, httplib::Response& res) {
    ++world_size_calls;
    query = req.get_param_value("include_dp");
    res.set_content(R"({"world_size": 1})", "application/json");
  });
  server.Post("/init_weight_transfer_engine", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(R"({"error":"no"})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  NcclWeightSender sender;
  NcclSenderOptions options;
  options.device = at::Device(at::kCPU);  // on a GPU machine this is what fails after NCCL loads
  options.timeout_s = 5;
  CHECK_THROWS_WITH(sender.connect({"http://127.0.0.1:" + std::to_string(port) + "/"}, options),
                    Catch::Contains("NCCL"));
  CHECK_FALSE(sender.connected());
  server.stop();
  thread.join();
  CHECK(world_size_calls == 1);
  CHECK(query == "true");
  at::Tensor t = at::zeros({2});
  CHECK_THROWS_WITH(sender.send({{"w", t}}, "1"), Catch::Contains("not connected"));
}

TEST_CASE(
    "weight_sync: the TCPStore host gives up at its deadline, or at once when a receiver failed",
    "[weight_sync]") {
  NcclUniqueId id{};
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  CHECK_THROWS_WITH(TcpStoreHost(0, 2, id, 2), Catch::Contains("not every rank joined"));
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  start = Clock::now();
  CHECK_THROWS_WITH(TcpStoreHost(0, 2, id, 300,
                                 [&] {
                                   return Clock::now() - start > std::chrono::milliseconds(200)
                                              ? std::string("POST /init on http://e: 500")
                                              : std::string();
                                 }),
                    Catch::Contains("gave up") && Catch::Contains("POST /init on http://e: 500"));
  CHECK(Clock::now() - start < std::chrono::seconds(5));
}

namespace {

// A stand-in engine on 127.0.0.1: world size 1, and /init_weight_transfer_engine answers `status`
// at once without ever joining the rendezvous.
struct FakeEngine {
  httplib::Server server;
  std::thread thread;
  std::string url;
  explicit FakeEngine(int status) {
    server.Get("/get_world_size", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"world_size": 1})", "application/json");
    });
    server.Post("/init_weight_transfer_engine",
                [status](const httplib::Request&, httplib::Response& res) {
                  res.status = status;
                  res.set_content(status == 200 ? R"({"message":"ok"})" : R"({"error":"no CUDA"})",
                                  "application/json");
                });
    const int port = server.bind_to_any_port("127.0.0.1");
    url = "http://127.0.0.1:" + std::to_string(port);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~FakeEngine() {
    server.stop();
    thread.join();
  }
};

std::string connect_error(const std::string& url, double timeout_s) {
  NcclWeightSender sender;
  NcclSenderOptions options;
  options.use_unique_id = false;  // the TCPStore rendezvous (it once hung here)
  options.timeout_s = timeout_s;
  try {
    sender.connect({url}, options);
  } catch (const vime::Error& e) {
    return e.what();
  }
  return "connected";
}

}  // namespace

TEST_CASE(
    "weight_sync: an engine that fails or never joins the TCPStore rendezvous is named in time",
    "[weight_sync]") {
  using Clock = std::chrono::steady_clock;
  {
    FakeEngine refusing(500);
    const auto start = Clock::now();
    const std::string error = connect_error(refusing.url, 300);
    INFO(error);
    CHECK(Clock::now() - start < std::chrono::seconds(10));    // not the 300 s deadline
    if (error.find("ncclGetUniqueId") == std::string::npos) {  // libnccl present (needs no GPU)
      CHECK_THAT(error, Catch::Contains("TCPStore") && Catch::Contains(refusing.url) &&
                            Catch::Contains("500"));
    }
  }
  {
    FakeEngine silent(200);
    const auto start = Clock::now();
    const std::string error = connect_error(silent.url, 3);
    INFO(error);
    CHECK(Clock::now() - start < std::chrono::seconds(15));
    if (error.find("ncclGetUniqueId") == std::string::npos) {
      CHECK_THAT(error, Catch::Contains("not every rank joined") && Catch::Contains(silent.url));
      CHECK(error.find('\n') == std::string::npos);
    }
  }
}
