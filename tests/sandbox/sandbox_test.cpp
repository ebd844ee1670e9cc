// lib/vime/sandbox with hostile snippets: each is contained, its result says what happened, and the
// test process (the trainer, in real use) is unaffected. This machine allows unprivileged user
// namespaces and mounts in them (`unshare -rm true`), so every run here has Isolation::kFull.
#include "vime/sandbox/sandbox.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using vime::sandbox::Isolation;
using vime::sandbox::JailResult;
using vime::sandbox::Sandbox;
using vime::sandbox::SandboxOptions;

namespace {

SandboxOptions hostile_options() {
  SandboxOptions o;
  o.limits.wall_timeout_s = 5;  // python3 starts in ~0.4 s on a loaded 2-core machine
  o.limits.cpu_seconds = 1;
  o.limits.memory_bytes = int64_t{256} << 20;
  o.limits.file_size_bytes = int64_t{1} << 20;
  o.limits.open_files = 32;
  o.limits.processes = 16;
  o.limits.max_output_bytes = 4096;
  o.concurrency = 4;
  return o;
}

const Sandbox& sandbox() {
  static const Sandbox s(hostile_options());
  return s;
}

// For the snippets that only end when killed: a shorter wall clock.
SandboxOptions quick_kill_options() {
  SandboxOptions o = hostile_options();
  o.limits.wall_timeout_s = 1.5;
  return o;
}
const Sandbox& quick_kill_sandbox() {
  static const Sandbox s(quick_kill_options());
  return s;
}

// Processes in some pid namespace below ours: only sandbox runs make them on this machine.
int nested_processes() {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream status(entry.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("NSpid:", 0) != 0) continue;
      if (line.find_first_of("0123456789") != line.find_last_of("0123456789") &&
          std::count(line.begin(), line.end(), '\t') >= 2) {
        ++n;
      }
    }
  }
  return n;
}

// Waits (up to 2 s) for the kernel to finish killing a namespace's processes.
int nested_processes_settled() {
  int n = nested_processes();
  for (int i = 0; i < 40 && n > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    n = nested_processes();
  }
  return n;
}

int sandbox_dirs() {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
    if (entry.path().filename().string().rfind("vime_sandbox_", 0) == 0) ++n;
  }
  return n;
}

JailResult run(const std::string& code, const Sandbox& box = sandbox()) {
  JailResult r = box.run_python(code);
  UNSCOPED_INFO("stdout: " << r.stdout_text << "\nstderr: " << r.stderr_text << "\nexit "
                           << r.exit_code.value_or(-1) << " signal " << r.signal.value_or(0)
                           << " timed out " << r.timed_out << " in " << r.seconds << " s");
  return r;
}

}  // namespace

TEST_CASE("the sandbox runs python isolated: own uid, scrubbed env, a jail of a filesystem",
          "[sandbox]") {
  REQUIRE(sandbox().isolation() == Isolation::kFull);
  ::setenv("VIME_SANDBOX_SECRET", "hunter2", 1);
  const int dirs_before = sandbox_dirs();
  auto r =
      run("import os\n"
          "print(os.getcwd(), os.getpid())\n"
          "print(sorted(os.listdir('/')))\n"
          "print('VIME_SANDBOX_SECRET' in os.environ, sorted(os.environ))\n"
          "open('mine.txt', 'w').write('ok')\n"
          "print(open('mine.txt').read())\n");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.stdout_text, Catch::StartsWith("/tmp 1\n"));  // pid 1 of its own pid namespace
  // Only what the jail binds: no /home, /root, /proc, /work, /etc/passwd.
  CHECK_THAT(r.stdout_text, Catch::Contains("['bin', 'dev', 'etc', 'lib'"));
  for (const char* absent : {"'home'", "'root'", "'proc'", "'work'", "'var'", "hunter2"}) {
    CHECK_THAT(r.stdout_text, !Catch::Contains(absent));
  }
  CHECK_THAT(r.stdout_text, Catch::Contains("False ['HOME', 'LANG'"));
  CHECK_THAT(r.stdout_text, Catch::EndsWith("\nok\n"));
  CHECK(sandbox_dirs() == dirs_before);  // its directory is gone, with what it wrote
}

TEST_CASE("sandbox: an infinite loop and a sleep are killed at their limits", "[sandbox]") {
  auto busy = run("while True:\n    pass\n", quick_kill_sandbox());
  CHECK_FALSE(busy.exit_code.has_value());  // SIGXCPU at 1 CPU second, or the 1.5 s wall clock
  CHECK(busy.signal.has_value());
  CHECK(busy.seconds < 3.5);
  auto sleeper = run("import time\ntime.sleep(60)\n", quick_kill_sandbox());
  CHECK(sleeper.timed_out);
  CHECK(sleeper.signal == SIGKILL);
  CHECK(sleeper.seconds >= 1.5);
  CHECK(sleeper.seconds < 3.5);
}

TEST_CASE("sandbox: a fork bomb stops at the process limit and leaves nothing behind",
          "[sandbox]") {
  rlimit before{};
  ::getrlimit(RLIMIT_NPROC, &before);
  REQUIRE(nested_processes_settled() == 0);
  SECTION("forks until fork fails") {
    auto r = run("import os\nwhile True:\n    os.fork()\n");
    CHECK_THAT(r.stderr_text, Catch::Contains("Resource temporarily unavailable"));
    CHECK_FALSE(r.timed_out);  // every process fails a fork and exits
  }
  SECTION("keeps forking through the failures, until the wall clock") {
    auto r =
        run("import os, time\n"
            "while True:\n"
            "    try:\n"
            "        os.fork()\n"
            "    except OSError:\n"
            "        time.sleep(0.01)\n",
            quick_kill_sandbox());
    CHECK(r.timed_out);
  }
  SECTION("children that leave the process group (setsid) die with the run") {
    auto r =
        run("import os, time\n"
            "for i in range(100):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as e:\n"
            "        print(i, e.strerror)\n"
            "        break\n"
            "    if pid == 0:\n"
            "        os.setsid()\n"
            "        time.sleep(60)\n"
            "        os._exit(0)\n");
    CHECK(r.exit_code == 0);
    CHECK(r.stdout_text == "15 Resource temporarily unavailable\n");  // 16 processes in all
    CHECK_FALSE(r.timed_out);  // the sleepers held its stdout: they were killed at once
  }
  CHECK(nested_processes_settled() == 0);
  // The caller's own limits and its ability to start processes are untouched.
  rlimit after{};
  ::getrlimit(RLIMIT_NPROC, &after);
  CHECK(after.rlim_cur == before.rlim_cur);
  CHECK(vime::test::run_command("true").exit_code == 0);
}

TEST_CASE("sandbox: a memory hog gets MemoryError, not the machine's memory", "[sandbox]") {
  auto r = run("b = bytearray(1 << 30)\n");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.stderr_text, Catch::Contains("MemoryError"));
  auto list = run("x = [0] * (10**9)\n");  // 8 GB of pointers
  CHECK_THAT(list.stderr_text, Catch::Contains("MemoryError"));
}

TEST_CASE("sandbox: huge output is cut at max_output_bytes", "[sandbox]") {
  auto r = run("import sys\nsys.stdout.write('x' * (20 << 20))\n");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == std::string(4096, 'x'));
  CHECK(r.stdout_bytes == int64_t{20} << 20);
}

TEST_CASE("sandbox: files: only its own directory is writable, host files are not there",
          "[sandbox]") {
  auto r =
      run("import errno\n"
          "for path in ['/escape.txt', '../escape.txt', '/usr/escape.txt', '/etc/escape.txt',\n"
          "             '/dev/escape.txt']:\n"
          "    try:\n"
          "        open(path, 'w')\n"
          "        print(path, 'WRITTEN')\n"
          "    except OSError as e:\n"
          "        print(path, errno.errorcode[e.errno])\n"
          "for path in ['/etc/passwd', '/etc/shadow', '/proc/self/environ', '/root',\n"
          "             '" VIME_SOURCE_DIR
          "/README.md']:\n"
          "    try:\n"
          "        open(path).read()\n"
          "        print(path, 'READ')\n"
          "    except OSError as e:\n"
          "        print(path, errno.errorcode[e.errno])\n"
          "try:\n"
          "    open('big', 'wb').write(b'x' * (2 << 20))\n"
          "except OSError as e:\n"
          "    print('big', errno.errorcode[e.errno])\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.stdout_text ==
        "/escape.txt EROFS\n../escape.txt EROFS\n/usr/escape.txt EROFS\n/etc/escape.txt EROFS\n"
        "/dev/escape.txt EROFS\n"
        "/etc/passwd ENOENT\n/etc/shadow ENOENT\n/proc/self/environ ENOENT\n/root ENOENT\n"
        "" VIME_SOURCE_DIR
        "/README.md ENOENT\n"
        "big EFBIG\n");  // RLIMIT_FSIZE (Python ignores SIGXFSZ)
  CHECK_FALSE(fs::exists("/usr/escape.txt"));
  CHECK_FALSE(fs::exists("/escape.txt"));
}

TEST_CASE("sandbox: no network: a server on the host's 127.0.0.1 is unreachable", "[sandbox]") {
  const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  REQUIRE(server >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(server, 4) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  auto r =
      run("import socket\n"
          "for target in [('127.0.0.1', " +
          port +
          "), ('1.1.1.1', 53)]:\n"
          "    try:\n"
          "        socket.create_connection(target, timeout=1)\n"
          "        print('CONNECTED')\n"
          "    except OSError as e:\n"
          "        print(e.strerror)\n"
          "try:\n"
          "    socket.getaddrinfo('example.com', 80)\n"
          "    print('RESOLVED')\n"
          "except OSError as e:\n"
          "    print('no dns')\n");
  CHECK(r.stdout_text == "Network is unreachable\nNetwork is unreachable\nno dns\n");
  CHECK(::accept(server, nullptr, nullptr) < 0);  // nothing ever connected
  ::close(server);
}

TEST_CASE("sandbox: open files are limited", "[sandbox]") {
  auto r = run("fs = [open('f%d' % i, 'w') for i in range(100)]\n");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.stderr_text, Catch::Contains("Too many open files"));
}

TEST_CASE("sandbox: at most `concurrency` runs at once", "[sandbox]") {
  SandboxOptions o = hostile_options();
  o.concurrency = 1;
  const Sandbox one_slot(o);
  const auto start = std::chrono::steady_clock::now();
  std::thread other([&] { one_slot.run_python("import time\ntime.sleep(0.4)\n"); });
  one_slot.run_python("import time\ntime.sleep(0.4)\n");
  other.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds >= 0.8);
}

TEST_CASE("sandbox: bad options are usage errors naming the option", "[sandbox]") {
  SandboxOptions o = hostile_options();
  o.python = "/nonexistent/python3";
  CHECK_THROWS_AS(Sandbox(o), vime::UsageError);
  o = hostile_options();
  o.read_only_paths = {"relative/path"};
  CHECK_THROWS_WITH(Sandbox(o), Catch::Contains("sandbox_read_only_paths"));
  // A python the jail cannot see (a pyenv shim, a venv outside /usr) names the option to add it.
  o.read_only_paths = {"/tmp"};
  CHECK_THROWS_WITH(Sandbox(o), Catch::Contains("/tmp"));
  const fs::path dir = fs::path(VIME_BUILD_DIR) / "sandbox_test_python";  // not under /tmp
  fs::create_directories(dir);
  const fs::path fake = dir / "python3";
  std::ofstream(fake) << "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n";  // like a shim
  fs::permissions(fake, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  o = hostile_options();
  o.python = fake.string();
  CHECK_THROWS_WITH(Sandbox(o), Catch::Contains("sandbox_read_only_paths"));
  o.read_only_paths = {dir.string()};
  CHECK(Sandbox(o).run_python("print(1)").stdout_text == "1\n");
}

TEST_CASE("sandbox: the weaker isolations (accepted only by name) still limit and kill",
          "[sandbox]") {
  // The fallbacks for kernels that refuse namespaces or mounts, run directly on this one.
  vime::test::TempDir dir;
  fs::permissions(dir.path(), fs::perms::all);  // the run's uid (65534 for root) writes here
  auto spec_for = [&](Isolation isolation, const std::string& code) {
    std::ofstream(dir.path() / "code.py") << code;
    vime::sandbox::JailSpec spec;
    spec.isolation = isolation;
    spec.program = "/usr/bin/python3";
    spec.argv = {"python3", (dir.path() / "code.py").string()};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.work_dir = dir.path();
    spec.limits = quick_kill_options().limits;
    return spec;
  };
  SECTION("namespaces without the jail: host files readable, still no network, pid 1") {
    auto r = vime::sandbox::run_in_jail(
        spec_for(Isolation::kNoFilesystemJail,
                 "import os, socket\n"
                 "print(os.getpid(), os.path.exists('/etc/passwd'))\n"
                 "try:\n"
                 "    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
                 "except OSError as e:\n"
                 "    print(e.strerror)\n"));
    CHECK(r.stdout_text == "1 True\nNetwork is unreachable\n");
  }
  SECTION("none: its process group is killed when it ends, and at the timeout") {
    auto r = vime::sandbox::run_in_jail(spec_for(Isolation::kNone,
                                                 "import os, time\n"
                                                 "pid = os.fork()\n"
                                                 "if pid == 0:\n"
                                                 "    time.sleep(60)\n"
                                                 "print(pid, os.getuid() != 0, flush=True)\n"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.stdout_text, Catch::EndsWith(" True\n"));  // not root, even for a root caller
    const pid_t child = std::stoi(r.stdout_text);
    for (int i = 0; i < 40 && ::kill(child, 0) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(::kill(child, 0) != 0);  // the sleeper died with the run (zombies are reaped by init)
    auto slow =
        vime::sandbox::run_in_jail(spec_for(Isolation::kNone, "import time\ntime.sleep(60)\n"));
    CHECK(slow.timed_out);
    CHECK(slow.signal == SIGKILL);
  }
}
