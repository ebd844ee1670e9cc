// ChildProcess: spawn, exit status, log capture, terminate (SIGTERM, then SIGKILL), the process
// group; the registry's cleanup on every exit path of a parent (launch_test_helper spawn ...).
#include "vime/launch/child_process.hpp"

#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "launch/launch_test_util.hpp"
#include "support/test_support.hpp"
#include "vime/error.hpp"

using vime::launch::ChildProcess;
using vime::launch::ChildSpec;
using vime::launch::test::process_alive;
using vime::launch::test::read_file;
using vime::launch::test::wait_until;
using namespace std::chrono_literals;

namespace {

ChildSpec sh(const std::string& script, const std::filesystem::path& log) {
  ChildSpec spec;
  spec.name = "test child";
  spec.argv = {"sh", "-c", script};
  spec.log_path = log;
  return spec;
}

}  // namespace

TEST_CASE("child_process: spawn, run, terminate with SIGTERM", "[launch]") {
  vime::test::TempDir dir;
  ChildSpec spec;
  spec.argv = {"sleep", "300"};
  spec.log_path = dir.path() / "sleep.log";
  ChildProcess child(spec);
  CHECK(child.pid() > 0);
  CHECK(child.is_running());
  CHECK(child.describe_exit() == "running");
  CHECK(::getpgid(child.pid()) == child.pid());  // its own process group
  const auto t0 = std::chrono::steady_clock::now();
  child.terminate(60s);
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);  // SIGTERM ended it, not the 60 s grace
  CHECK_FALSE(child.is_running());
  CHECK(child.describe_exit().starts_with("killed by signal 15"));
  child.terminate();  // again: a no-op
}

TEST_CASE("child_process: exit status, stdout+stderr in the log, extra env", "[launch]") {
  vime::test::TempDir dir;
  auto spec = sh("echo out-$FOO; echo err-line >&2; exit 7", dir.path() / "logs" / "c.log");
  spec.env = {{"FOO", "bar"}};
  ChildProcess child(spec);
  REQUIRE(wait_until([&] { return !child.is_running(); }));
  CHECK(child.describe_exit() == "exited with code 7");
  REQUIRE(child.wait_status());
  const std::string tail = child.log_tail();
  CHECK(tail == "out-bar\nerr-line");
  CHECK(child.log_tail(1) == "err-line");
}

TEST_CASE("child_process: a child that ignores SIGTERM is killed after the grace", "[launch]") {
  vime::test::TempDir dir;
  // The ignored SIGTERM is inherited by sleep, the grandchild in the same group.
  ChildProcess child(sh("trap '' TERM; sleep 30 & echo $!; wait", dir.path() / "c.log"));
  REQUIRE(wait_until([&] { return !child.log_tail().empty(); }));
  const pid_t grandchild = std::stoi(child.log_tail());
  CHECK(process_alive(grandchild));
  const auto t0 = std::chrono::steady_clock::now();
  child.terminate(300ms);
  CHECK(std::chrono::steady_clock::now() - t0 >= 300ms);
  CHECK(child.describe_exit().starts_with("killed by signal 9"));
  CHECK(wait_until([&] { return !process_alive(grandchild); }));
}

TEST_CASE("child_process: a missing program is one clear error", "[launch]") {
  ChildSpec spec;
  spec.name = "engine 0";
  spec.argv = {"no-such-program-vime-test"};
  CHECK_THROWS_WITH(ChildProcess(spec),
                    "cannot start engine 0: 'no-such-program-vime-test' is not on PATH");
  spec.argv = {"/nonexistent/vllm"};
  CHECK_THROWS_WITH(ChildProcess(spec),
                    "cannot start engine 0: '/nonexistent/vllm' is not an executable file");
  CHECK(vime::launch::find_program("sh").value_or("").ends_with("/sh"));
}

TEST_CASE("child_process: the destructor stops the child and its group", "[launch]") {
  vime::test::TempDir dir;
  pid_t grandchild = 0;
  {
    ChildProcess child(sh("sleep 30 & echo $!; wait", dir.path() / "c.log"));
    REQUIRE(wait_until([&] { return !child.log_tail().empty(); }));
    grandchild = std::stoi(child.log_tail());
    CHECK(process_alive(grandchild));
  }
  CHECK(wait_until([&] { return !process_alive(grandchild); }));
}

namespace {

// Starts launch_test_helper as a parent that spawns `sleep 60` through the registry; returns the
// helper and the sleep's pid.
std::pair<std::unique_ptr<ChildProcess>, pid_t> start_parent(const vime::test::TempDir& dir,
                                                             const std::string& mode,
                                                             int parent_death_signal) {
  const std::string pidfile = (dir.path() / ("pid-" + mode)).string();
  ChildSpec spec;
  spec.name = "helper";
  spec.argv = {VIME_LAUNCH_TEST_HELPER,
               "spawn",
               pidfile,
               mode,
               std::to_string(parent_death_signal),
               "sleep",
               "60"};
  spec.log_path = dir.path() / ("helper-" + mode + ".log");
  spec.parent_death_signal = SIGKILL;
  auto helper = std::make_unique<ChildProcess>(spec);
  pid_t grandchild = 0;
  wait_until([&] { return std::filesystem::exists(pidfile); }, 10s);
  if (std::filesystem::exists(pidfile)) grandchild = std::stoi(read_file(pidfile));
  return {std::move(helper), grandchild};
}

}  // namespace

TEST_CASE("child_process: children die when the parent is killed with SIGKILL", "[launch]") {
  vime::test::TempDir dir;
  auto [helper, grandchild] = start_parent(dir, "wait", SIGTERM);
  REQUIRE(grandchild > 0);
  CHECK(process_alive(grandchild));
  ::kill(helper->pid(), SIGKILL);  // no handler runs: the parent-death signal does the work
  CHECK(wait_until([&] { return !process_alive(grandchild); }));
  CHECK(wait_until([&] { return !helper->is_running(); }));
}

TEST_CASE("child_process: the registry cleans up on SIGTERM, std::exit, std::terminate, SIGSEGV",
          "[launch]") {
  vime::test::TempDir dir;
  // No parent-death signal: only the registry's handlers can stop the grandchild.
  struct Case {
    std::string mode;
    int signal_to_send;
    std::string exit;
  };
  for (const Case& c :
       {Case{"wait", SIGTERM, "killed by signal 15"}, Case{"wait", SIGINT, "killed by signal 2"},
        Case{"exit", 0, "exited with code 0"}, Case{"throw", 0, "killed by signal 6"},
        Case{"segv", 0, "killed by signal 11"}}) {
    SECTION(c.mode + " " + std::to_string(c.signal_to_send)) {
      auto [helper, grandchild] = start_parent(dir, c.mode, 0);
      REQUIRE(grandchild > 0);
      if (c.signal_to_send != 0) {
        CHECK(process_alive(grandchild));
        ::kill(helper->pid(), c.signal_to_send);
      }
      CHECK(wait_until([&] { return !helper->is_running(); }));
      INFO(helper->log_tail());
      CHECK(helper->describe_exit().starts_with(c.exit));
      CHECK(wait_until([&] { return !process_alive(grandchild); }, 2s));
    }
  }
}
