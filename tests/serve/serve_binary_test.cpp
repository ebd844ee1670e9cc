// The real `vime serve` binary on a make_arith_task model: start, wait for /health, a completion,
// SIGTERM, exit code 0.
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "support/test_support.hpp"
#include "vime/json.hpp"

using vime::Json;

TEST_CASE("serve: the vime binary serves, answers and exits 0 on SIGTERM", "[serve]") {
  vime::test::TempDir dir;
  auto made = vime::test::run_command(std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " +
                                      dir.path().string() +
                                      " --num-train 16 --num-test 4 --hidden-size 32"
                                      " --num-layers 1 --head-dim 16 --intermediate-size 64");
  REQUIRE(made.exit_code == 0);
  int port = 0;
  {  // a free port: bind port 0, read it back, release it for the child
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    ::close(fd);
  }
  const std::string model = (dir.path() / "model").string(), port_str = std::to_string(port);
  const std::string log = (dir.path() / "serve.log").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    (void)out;
    ::dup2(::fileno(stdout), 2);
    ::execl(VIME_BIN, VIME_BIN, "serve", "--hf-checkpoint", model.c_str(), "--port",
            port_str.c_str(), "--served-model-name", "arith", nullptr);
    ::_exit(127);
  }
  httplib::Client c("127.0.0.1", port);
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    auto h = c.Get("/health");
    up = h && h->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(up);
  if (up) {
    auto r = c.Post("/v1/completions", R"({"prompt":"12+34=","max_tokens":3,"temperature":0})",
                    "application/json");
    REQUIRE(r);
    CHECK(r->status == 200);
    const Json body = Json::parse(r->body);
    CHECK(body.at("model").as_string() == "arith");
    CHECK(body.at("usage").at("completion_tokens").as_int() == 3);
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO(vime::test::run_command("cat " + log).output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
