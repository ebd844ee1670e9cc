// http::Client against real servers on 127.0.0.1: many requests in flight on one loop thread,
// connection reuse, cancel closing the connection, timeouts, refused connections.
#include "vime/http/client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "http/local_server.hpp"

using vime::http::Client;
using vime::http::Request;
using vime::http::Response;
using Clock = std::chrono::steady_clock;

namespace {

size_t thread_count() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

bool wait_for(const std::function<bool()>& done, double seconds = 10) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return done();
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A bare TCP listener: accepts one connection, reads the request head, then waits for the client
// to close (recv() returns 0) without ever answering.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(fd_, 16);
    thread_ = std::thread([this] {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(conn, buf, sizeof(buf), 0);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      got_request = true;
      while (::recv(conn, buf, sizeof(buf), 0) > 0) {
      }
      disconnected = true;
      ::close(conn);
    });
  }
  ~SilentServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hang"; }

  std::atomic<bool> got_request{false};
  std::atomic<bool> disconnected{false};

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("http::Client: 200 slow requests in flight at once on one client thread", "[http]") {
  vime::test::LocalServer server(256);
  std::atomic<int> current{0};
  std::atomic<int> peak{0};
  server.http.Post("/slow", [&](const httplib::Request& req, httplib::Response& res) {
    const int now = ++current;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    --current;
    res.set_content(req.body, "text/plain");
  });
  server.start();
  // A first request warms the server's 256 workers; on a loaded machine (or under ASan) it may
  // time out while they start, so it gets a few tries.
  bool warm = false;
  for (int attempt = 0; attempt < 5 && !warm; ++attempt)
    warm = static_cast<bool>(
        httplib::Client("127.0.0.1", server.port()).Post("/slow", "warm", "text/plain"));
  REQUIRE(warm);

  const size_t threads_before = thread_count();
  Client client;
  CHECK(thread_count() == threads_before + 1);  // the loop thread, and no other

  constexpr int kRequests = 200;
  std::mutex mutex;
  std::set<std::thread::id> callback_threads;
  std::vector<std::string> bodies(kRequests);
  std::atomic<int> done{0};
  const auto start = Clock::now();
  for (int i = 0; i < kRequests; ++i) {
    Request r;
    r.method = "POST";
    r.url = server.url() + "/slow";
    r.body = std::to_string(i);
    client.submit(std::move(r), [&, i](Response res) {
      std::lock_guard<std::mutex> lock(mutex);
      callback_threads.insert(std::this_thread::get_id());
      bodies[i] = res.ok() ? res.body : res.describe();
      ++done;
    });
  }
  REQUIRE(wait_for([&] { return peak.load() == kRequests; }));
  CHECK(thread_count() == threads_before + 1);
  REQUIRE(wait_for([&] { return done.load() == kRequests; }));
  CHECK(seconds_since(start) < 10);  // one after another would take 80 s
  CHECK(client.peak_in_flight() == kRequests);
  CHECK(client.in_flight() == 0);
  CHECK(callback_threads.size() == 1);
  CHECK(callback_threads.count(std::this_thread::get_id()) == 0);
  for (int i = 0; i < kRequests; ++i) CHECK(bodies[i] == std::to_string(i));
}

TEST_CASE("http::Client: sequential requests reuse one kept-alive connection", "[http]") {
  vime::test::LocalServer server;
  std::mutex mutex;
  std::set<int> client_ports;
  server.http.Get("/ping", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex);
    client_ports.insert(req.remote_port);
    res.set_content("pong", "text/plain");
  });
  server.start();
  Client client;
  for (int i = 0; i < 4; ++i) {  // httplib closes a connection after 5 requests
    const Response r = client.send(Request::get(server.url() + "/ping")).get();
    REQUIRE(r.ok());
    CHECK(r.body == "pong");
  }
  CHECK(client_ports.size() == 1);
}

TEST_CASE("http::Client: cancel closes the connection and reports cancelled", "[http]") {
  SilentServer server;
  Client client;
  std::promise<Response> result;
  const Client::Id id =
      client.submit(Request::get(server.url()), [&](Response r) { result.set_value(r); });
  REQUIRE(wait_for([&] { return server.got_request.load(); }));
  CHECK(client.in_flight() == 1);
  client.cancel(id);
  const Response r = result.get_future().get();
  CHECK(r.cancelled);
  CHECK_FALSE(r.ok());
  CHECK(r.status == 0);
  CHECK(wait_for([&] { return server.disconnected.load(); }, 5));
  CHECK(client.in_flight() == 0);
  client.cancel(id);  // already finished: ignored
}

TEST_CASE("http::Client: cancel_all and the destructor end what is in flight", "[http]") {
  SilentServer first;
  SilentServer second;
  std::atomic<int> cancelled{0};
  {
    Client client;
    client.submit(Request::get(first.url()), [&](Response r) { cancelled += r.cancelled; });
    REQUIRE(wait_for([&] { return first.got_request.load(); }));
    client.cancel_all();
    REQUIRE(wait_for([&] { return cancelled.load() == 1; }));
    CHECK(wait_for([&] { return first.disconnected.load(); }, 5));

    client.submit(Request::get(second.url()), [&](Response r) { cancelled += r.cancelled; });
    REQUIRE(wait_for([&] { return second.got_request.load(); }));
  }  // ~Client
  CHECK(cancelled.load() == 2);
  CHECK(wait_for([&] { return second.disconnected.load(); }, 5));
}

TEST_CASE("http::Client: a request past its timeout fails as timed out", "[http]") {
  std::atomic<bool> finished{false};
  vime::test::LocalServer server;
  server.http.Get("/sleep", [&](const httplib::Request&, httplib::Response& res) {
    wait_for([&] { return finished.load(); }, 5);
    res.set_content("late", "text/plain");
  });
  server.http.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  server.start();
  Client client;
  const auto start = Clock::now();
  auto slow = client.send(Request::get(server.url() + "/sleep", 0.2));
  auto fast = client.send(Request::get(server.url() + "/fast", 5));
  const Response r = slow.get();
  CHECK(seconds_since(start) < 3);  // the server answers after 5 s
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.error.empty());
  CHECK(fast.get().body == "ok");  // the other request is unaffected
  finished = true;
}

TEST_CASE("http::Client: connection refused and HTTP errors come back in the Response", "[http]") {
  int port = 0;
  {
    vime::test::LocalServer closed;
    port = closed.start();
  }  // nothing listens there now
  vime::test::LocalServer server;
  server.http.Post("/fail", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_content("busy", "text/plain");
  });
  server.start();
  Client client;
  const Response refused =
      client.send(Request::get("http://127.0.0.1:" + std::to_string(port) + "/x")).get();
  CHECK(refused.status == 0);
  CHECK_FALSE(refused.ok());
  CHECK_FALSE(refused.cancelled);
  CHECK_THAT(refused.error, Catch::Contains("onnect"));
  const Response failed =
      client.send(Request::post_json(server.url() + "/fail", vime::Json())).get();
  CHECK(failed.error.empty());
  CHECK(failed.status == 503);
  CHECK(failed.describe() == "HTTP 503: busy");
}
