// --rm-type remote_rm against real HTTP servers on 127.0.0.1: a cpp-httplib server that answers,
// is slow, or fails with 5xx, and a raw socket server that drops connections without answering.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "reward/reward_test_support.hpp"
#include "vime/error.hpp"

using vime::Json;

namespace {

class TestServer {
 public:
  TestServer() {
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      ++calls_;
      Json body = Json::parse(req.body, "request");
      Json reply = Json::object();
      reply["score"] = static_cast<int64_t>(body.at("response").as_string().size());
      reply["seen"] = body;
      res.set_content(reply.dump(), "application/json");
    });
    server_.Post("/flaky", [this](const httplib::Request&, httplib::Response& res) {
      if (++calls_ <= 2) {
        res.status = 503;
        res.set_content("busy", "text/plain");
        return;
      }
      res.set_content("0.75", "application/json");
    });
    server_.Post("/slow", [this](const httplib::Request&, httplib::Response& res) {
      if (++calls_ == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      res.set_content("1", "application/json");
    });
    server_.Post("/broken", [this](const httplib::Request&, httplib::Response& res) {
      ++calls_;
      res.status = 500;
    });
    server_.Post("/not_json", [this](const httplib::Request&, httplib::Response& res) {
      ++calls_;
      res.set_content("<html>", "text/html");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~TestServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int calls() const { return calls_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> calls_{0};
};

// Accepts connections; closes the first `drops` right after reading the request, answers later
// ones.
class DroppingServer {
 public:
  explicit DroppingServer(int drops) : drops_(drops) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~DroppingServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/rm"; }
  int connections() const { return connections_; }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (connections_ > drops_) {
        std::string body = "{\"score\": 2}";
        std::string reply =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
      ::close(c);  // for the first `drops`: no reply at all
    }
  }
  int fd_ = -1;
  int port_ = 0;
  int drops_;
  std::atomic<int> connections_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

vime::Args remote_args(const std::string& url, int retries = 3) {
  vime::Args args = vime::test::reward_args("remote_rm");
  args.set("rm_url", Json(url), vime::ArgSource::kCommandLine, "--rm-url");
  args.set("remote_rm_max_retries", Json(retries), vime::ArgSource::kCustomConfig);
  args.set("remote_rm_timeout_s", Json(0.5), vime::ArgSource::kCustomConfig);
  args.set("remote_rm_backoff_scale", Json(0.01), vime::ArgSource::kCustomConfig);
  return args;
}

Json grade_remote(const vime::Args& args, const std::string& response = "four") {
  vime::reward::RewardDispatcher d(args);
  vime::Sample s;
  s.prompt = "2+2?";
  s.response = response;
  s.label = 4;
  return d.reward(s);
}

std::string error_of(const vime::Args& args) {
  try {
    grade_remote(args);
  } catch (const vime::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("remote_rm posts prompt, response and label and returns the reply", "[remote_rm]") {
  TestServer server;
  Json r = grade_remote(remote_args(server.url("/echo")));
  CHECK(r.at("score").as_int() == 4);
  CHECK(r.at("seen").at("prompt").as_string() == "2+2?");
  CHECK(r.at("seen").at("response").as_string() == "four");
  CHECK(r.at("seen").at("label").as_int() == 4);
  CHECK(server.calls() == 1);

  // boxed_remote_rm posts the original response, as slime does.
  vime::Args boxed = remote_args(server.url("/echo"));
  boxed.set("rm_type", Json("boxed_remote_rm"), vime::ArgSource::kCommandLine, "--rm-type");
  CHECK(grade_remote(boxed, "so \\boxed{4}").at("seen").at("response").as_string() ==
        "so \\boxed{4}");
}

TEST_CASE("remote_rm retries 5xx answers", "[remote_rm]") {
  TestServer server;
  CHECK(grade_remote(remote_args(server.url("/flaky"))).as_double() == 0.75);
  CHECK(server.calls() == 3);
}

TEST_CASE("remote_rm times out a slow server and retries", "[remote_rm]") {
  TestServer server;
  auto start = std::chrono::steady_clock::now();
  CHECK(grade_remote(remote_args(server.url("/slow"))).as_int() == 1);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(server.calls() == 2);
  CHECK(s < 1.4);  // gave up on the 1.5 s reply after the 0.5 s timeout
}

TEST_CASE("remote_rm retries dropped connections", "[remote_rm]") {
  DroppingServer server(2);
  CHECK(grade_remote(remote_args(server.url())).at("score").as_int() == 2);
  CHECK(server.connections() == 3);
}

TEST_CASE("remote_rm gives up after the last attempt with the cause", "[remote_rm]") {
  TestServer server;
  CHECK_THAT(error_of(remote_args(server.url("/broken"))),
             Catch::Contains("failed after 3 attempts") && Catch::Contains("HTTP 500"));
  CHECK(server.calls() == 3);
  CHECK_THAT(error_of(remote_args(server.url("/not_json"), 2)),
             Catch::Contains("not valid JSON") || Catch::Contains("JSON"));
  DroppingServer dead(100);
  CHECK_THAT(error_of(remote_args(dead.url(), 2)), Catch::Contains("failed after 2 attempts"));
  vime::Args no_url = vime::test::reward_args("remote_rm");
  CHECK_THAT(error_of(no_url), Catch::Contains("--rm-url"));
}
