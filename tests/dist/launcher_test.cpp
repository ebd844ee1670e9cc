// The local launcher and the c10d rendezvous in real processes on 127.0.0.1: dist_probe launches
// its ranks as `vime train` does (or runs as a torchrun-style rank), they meet in a Gloo group and
// all-reduce; a failing or killed rank ends the job within seconds with one line naming it; a
// wrong address or a missing rank times out with a message that names them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// Every test bounds itself: the probe runs under timeout(1), so a hang fails instead of blocking.
const std::string kProbe = std::string("timeout -s KILL 150 ") + VIME_DIST_PROBE_BIN;
// The probes' own rendezvous/collective timeout (60 s) is far longer than the few seconds a test
// allows from a failure to the job's end: a job that ends in time was ended by the launcher, not
// by a c10d timeout. (Start-up is not bounded tightly: a LibTorch process takes seconds to start
// on a loaded CI machine.)
const std::string kLongTimeout = "DIST_PROBE_TIMEOUT_S=60 ";

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct Timed {
  vime::test::CommandResult result;
  double seconds = 0;
};

Timed run_timed(const std::string& command) {
  const auto t0 = Clock::now();
  Timed t;
  t.result = vime::test::run_command(command);
  t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int count_containing(const std::string& text, const std::string& needle) {
  int n = 0;
  for (const auto& line : lines_of(text)) n += line.find(needle) != std::string::npos;
  return n;
}

// A probe whose output is read as it comes: the test acts on what the ranks print. A watchdog
// kills the launcher (its ranks follow by their parent-death signal) after 120 s.
class LiveProbe {
 public:
  explicit LiveProbe(const std::string& arguments, const std::string& env = {}) {
    // `exec`: the shell's pid becomes the launcher's, printed first.
    pipe_ = ::popen(("echo launcher $$; " + env + kLongTimeout + "exec " + VIME_DIST_PROBE_BIN +
                     " " + arguments + " 2>&1")
                        .c_str(),
                    "r");
    REQUIRE(pipe_ != nullptr);
    std::smatch match;
    REQUIRE(wait_for(std::regex(R"(^launcher (\d+))"), &match));
    launcher_ = std::stoi(match[1]);
    watchdog_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      if (!done_cv_.wait_for(lock, 120s, [this] { return done_; })) ::kill(launcher_, SIGKILL);
    });
  }
  ~LiveProbe() {
    if (pipe_ != nullptr) finish();
  }
  pid_t launcher() const { return launcher_; }
  // Reads lines until one matches; false at EOF.
  bool wait_for(const std::regex& pattern, std::smatch* match) {
    char buffer[4096];
    while (std::fgets(buffer, sizeof(buffer), pipe_) != nullptr) {
      output_ += buffer;
      last_ = buffer;
      if (std::regex_search(last_, *match, pattern)) return true;
    }
    return false;
  }
  // Reads to EOF; the launcher's exit code (-1 when it did not exit normally).
  int finish() {
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe_)) > 0) output_.append(buffer, n);
    const int status = ::pclose(pipe_);
    pipe_ = nullptr;
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return output_; }

 private:
  FILE* pipe_ = nullptr;
  pid_t launcher_ = -1;
  std::string output_, last_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread watchdog_;
};

}  // namespace

TEST_CASE("launcher: 2 and 3 ranks all-reduce the right sum, output prefixed per rank", "[dist]") {
  for (const int n : {2, 3}) {
    INFO(n << " ranks");
    const auto t = run_timed("DIST_PROBE_PASSED=through " + kLongTimeout + kProbe +
                             " allreduce -- --actor-num-gpus-per-node " + std::to_string(n));
    INFO(t.result.output);
    CHECK(t.result.exit_code == 0);
    const int sum = n * (n + 1) / 2;
    for (int r = 0; r < n; ++r) {
      const std::string rank = "[rank " + std::to_string(r) + "] ";
      CHECK_THAT(t.result.output, Contains(rank + "rank " + std::to_string(r) + " of " +
                                           std::to_string(n) + ": sum " + std::to_string(sum)));
      CHECK_THAT(t.result.output, Contains(rank + "rank " + std::to_string(r) + " pid ") &&
                                      Contains("(vime, local rank " + std::to_string(r) + " of " +
                                               std::to_string(n) + ", node 0, 127.0.0.1:"));
      // A partial last line is flushed at exit, still prefixed.
      CHECK_THAT(t.result.output, Contains(rank + "rank " + std::to_string(r) + " done\n"));
    }
    CHECK(count_containing(t.result.output, "passed through") == n);  // the env reaches ranks
    for (const auto& line : lines_of(t.result.output)) {
      CHECK(line.rfind("[rank ", 0) == 0);
    }
    CHECK(t.seconds < 100);  // no hang (timeout(1) would end it at 150 s)
  }
}

TEST_CASE("launcher: byte broadcast and all-gather across 3 ranks", "[dist]") {
  const auto t = run_timed(kLongTimeout + kProbe + " bytes -- --actor-num-gpus-per-node 3");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 0);
  for (int r = 0; r < 3; ++r) {
    CHECK_THAT(t.result.output,
               Contains("[rank " + std::to_string(r) + "] rank " + std::to_string(r) +
                        ": broadcast 'hello from rank 0' gathered a,bb,ccc"));
  }
}

TEST_CASE("launcher: a rank exiting with code 3 ends the blocked job with one line naming it",
          "[dist]") {
  LiveProbe probe("exit-at 1 3 -- --actor-num-gpus-per-node 3");
  std::smatch match;
  for (int ready = 0; ready < 3; ++ready) {  // every rank met before rank 1 leaves
    REQUIRE(probe.wait_for(std::regex(R"(\] rank \d pid \d+ ready)"), &match));
  }
  const auto t0 = Clock::now();
  const int code = probe.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(probe.output());
  CHECK(code == 3);
  CHECK(count_containing(probe.output(), "dist_probe: rank ") == 1);
  CHECK_THAT(probe.output(),
             Contains("dist_probe: rank 1 exited with code 3; stopping the other 2 ranks\n"));
  CHECK_THAT(probe.output(), !Contains("the barrier completed"));
  CHECK(seconds < 10);  // the others' collective timeout is 60 s: the launcher ended them
}

TEST_CASE("launcher: a rank killed with SIGKILL from outside ends the job", "[dist]") {
  LiveProbe probe("sleep -- --actor-num-gpus-per-node 3");
  std::smatch match;
  REQUIRE(probe.wait_for(std::regex(R"(\[rank 2\] rank 2 pid (\d+) ready)"), &match));
  const pid_t victim = std::stoi(match[1]);
  const auto t0 = Clock::now();
  REQUIRE(::kill(victim, SIGKILL) == 0);
  const int code = probe.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(probe.output());
  CHECK(code == 128 + SIGKILL);
  CHECK(count_containing(probe.output(), "dist_probe: rank ") == 1);
  CHECK_THAT(probe.output(), Contains("dist_probe: rank 2 was killed by signal 9 (Killed); "
                                      "stopping the other 2 ranks"));
  CHECK(seconds < 10);
}

TEST_CASE("launcher: SIGTERM to the launcher is forwarded and ends every rank", "[dist]") {
  LiveProbe probe("sleep -- --actor-num-gpus-per-node 2");
  const pid_t launcher = probe.launcher();
  std::smatch ready;
  REQUIRE(probe.wait_for(std::regex(R"(\[rank 1\] rank 1 pid (\d+) ready)"), &ready));
  const pid_t rank1 = std::stoi(ready[1]);
  const auto t0 = Clock::now();
  REQUIRE(::kill(launcher, SIGTERM) == 0);
  const int code = probe.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(probe.output());
  CHECK(code == 128 + SIGTERM);
  CHECK_THAT(probe.output(), Contains("dist_probe: got SIGTERM; stopping 2 ranks"));
  CHECK(seconds < 10);
  CHECK(::kill(rank1, 0) != 0);  // gone (reaped by the launcher)
}

TEST_CASE("launcher: ranks that ignore SIGTERM are killed after the grace period", "[dist]") {
  LiveProbe probe("sleep -- --actor-num-gpus-per-node 2", "DIST_PROBE_IGNORE_SIGTERM=1 ");
  std::smatch ready;
  REQUIRE(probe.wait_for(std::regex(R"(\[rank 1\] rank 1 pid (\d+) ready)"), &ready));
  const auto t0 = Clock::now();
  REQUIRE(::kill(probe.launcher(), SIGTERM) == 0);
  const int code = probe.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(probe.output());
  CHECK(code == 128 + SIGTERM);
  CHECK_THAT(probe.output(), Contains("dist_probe: got SIGTERM; stopping 2 ranks\n") &&
                                 Contains("dist_probe: 2 ranks still running after 5 s; killing "
                                          "them\n"));
  CHECK(seconds > 4.5);  // the grace period was given
  CHECK(seconds < 15);
}

TEST_CASE("rendezvous: a wrong master address fails naming the address and the flags", "[dist]") {
  const int port = free_port();  // nobody listens there
  const auto t = run_timed(
      "DIST_PROBE_TIMEOUT_S=3 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=" +
      std::to_string(port) + " " + kProbe + " allreduce");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 1);
  CHECK_THAT(
      t.result.output,
      Contains("rank 1 could not reach rank 0's TCPStore at 127.0.0.1:" + std::to_string(port)) &&
          Contains("--master-addr / MASTER_ADDR") && Contains("--master-port"));
  CHECK(t.seconds < 30);  // 3 s and the start-up
}

TEST_CASE("rendezvous: rank 0 alone in a world of 2 times out naming rank 1", "[dist]") {
  const int port = free_port();
  const auto t = run_timed(
      "DIST_PROBE_TIMEOUT_S=3 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=" +
      std::to_string(port) + " " + kProbe + " allreduce");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 1);
  CHECK_THAT(t.result.output,
             Contains("1 of 2 ranks did not arrive") && Contains("(missing ranks: 1)") &&
                 Contains("127.0.0.1:" + std::to_string(port)) && Contains("within 3 s"));
  CHECK(t.seconds < 30);  // 3 s and the start-up
}

TEST_CASE("torchrun-style environment: two ranks started by hand meet and all-reduce", "[dist]") {
  const std::string common = kLongTimeout + "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 " +
                             "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) +
                             " ";
  // --actor-num-gpus-per-node 2 agrees with WORLD_SIZE: the probes run in place, no launcher.
  const std::string args = " allreduce -- --actor-num-gpus-per-node 2";
  const auto t = run_timed("(RANK=0 LOCAL_RANK=0 " + common + kProbe + args +
                           " > /dev/stdout & RANK=1 " + "LOCAL_RANK=1 " + common + kProbe + args +
                           "; s1=$?; wait $!; s0=$?; " + "test $s0 = 0 -a $s1 = 0)");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 0);
  CHECK_THAT(t.result.output, Contains("rank 0 of 2: sum 3") && Contains("rank 1 of 2: sum 3"));
  CHECK_THAT(t.result.output, Contains("(torchrun, local rank 1 of 2, node 0, 127.0.0.1:"));
  CHECK_THAT(t.result.output, !Contains("[rank "));  // no vime launcher in between
}

TEST_CASE("launcher: two nodes on one host, the same command with --node-rank 0 and 1", "[dist]") {
  const std::string flags = " allreduce -- --actor-num-nodes 2 --actor-num-gpus-per-node 2 " +
                            std::string("--master-addr 127.0.0.1 --master-port ") +
                            std::to_string(free_port()) + " --node-rank ";
  const auto t = run_timed("(" + kLongTimeout + kProbe + flags + "0 & " + kLongTimeout + kProbe +
                           flags + "1; s1=$?; wait $!; s0=$?; test $s0 = 0 -a $s1 = 0)");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 0);
  for (int r = 0; r < 4; ++r) {
    CHECK_THAT(t.result.output, Contains("[rank " + std::to_string(r) + "] rank " +
                                         std::to_string(r) + " of 4: sum 10"));
  }
  // Node 1's launcher starts ranks 2 and 3 as its local ranks 0 and 1.
  CHECK_THAT(t.result.output, Contains("[rank 2] rank 2 pid ") &&
                                  Contains("(vime, local rank 0 of 2, node 1, 127.0.0.1:") &&
                                  Contains("(vime, local rank 1 of 2, node 1, 127.0.0.1:"));
}

TEST_CASE("vime train --actor-num-gpus-per-node 2 starts two ranks of the same command", "[dist]") {
  vime::test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "model");
  const auto prompts = dir.write("p.jsonl", R"({"prompt": "1+1", "label": "2"})"
                                            "\n");
  // Valid flags, a model directory without a tokenizer: each rank fails in the run itself.
  const auto t = run_timed(std::string("timeout -s KILL 150 ") + VIME_BIN +
                           " train --actor-num-gpus-per-node 2 --hf-checkpoint " +
                           (dir.path() / "model").string() + " --prompt-data " + prompts.string() +
                           " --input-key prompt --label-key label --rm-type math "
                           "--rollout-batch-size 1 --num-rollout 1");
  INFO(t.result.output);
  CHECK(t.result.exit_code == 2);
  CHECK_THAT(t.result.output, Contains("[rank 0] vime train: error: --hf-checkpoint ") ||
                                  Contains("[rank 1] vime train: error: --hf-checkpoint "));
  CHECK(count_containing(t.result.output, "vime train: rank ") == 1);
  CHECK_THAT(t.result.output, Contains("exited with code 2"));
}
