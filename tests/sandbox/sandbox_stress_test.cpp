// Many sandboxed runs at once from a process whose other threads keep coming and going, as in a
// retool rollout: each run's clone()d child is a copy of a multi-threaded process, and must reach
// its exec without waiting on a lock or a thread of the parent's (glibc's setresgid waited for the
// parent's threads forever). Every run ends with its own output, none hangs.
#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vime/sandbox/jail_process.hpp"

namespace fs = std::filesystem;
using vime::sandbox::Isolation;
using vime::sandbox::JailResult;
using vime::sandbox::JailSpec;

TEST_CASE("sandbox: 1024 runs from 16 threads while other threads start and end",
          "[sandbox_stress]") {
  constexpr int kCallers = 16, kRunsPerCaller = 64, kChurners = 4;
  // The three isolations, each with its own identity calls in the child: setresgid/setresuid in a
  // user namespace; setgroups/setresgid/setresuid to 65534 without namespaces (as root).
  constexpr Isolation kIsolations[] = {Isolation::kFull, Isolation::kNoFilesystemJail,
                                       Isolation::kNone};
  std::string base_pattern = (fs::temp_directory_path() / "vime_sandbox_stress_XXXXXX").string();
  REQUIRE(::mkdtemp(base_pattern.data()) != nullptr);
  const fs::path base = base_pattern;
  fs::permissions(base, fs::perms::all);  // without namespaces a root caller runs as 65534

  std::atomic<bool> stop{false};
  std::atomic<int64_t> threads_started{0};
  std::vector<std::thread> churners;
  for (int i = 0; i < kChurners; ++i) {
    churners.emplace_back([&] {
      while (!stop) {
        std::thread([&] { ++threads_started; }).join();
      }
    });
  }

  std::atomic<int> ok{0};
  std::mutex failure_mutex;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      const fs::path work = base / ("work" + std::to_string(c));
      const fs::path root = base / ("root" + std::to_string(c));
      fs::create_directory(work);
      fs::create_directory(root);
      fs::permissions(work, fs::perms::all);
      for (int i = 0; i < kRunsPerCaller; ++i) {
        const std::string word = "run-" + std::to_string(c) + "-" + std::to_string(i);
        JailSpec spec;
        spec.isolation = kIsolations[(c + i) % 3];
        spec.program = "/bin/echo";
        spec.argv = {"echo", word};
        spec.env = {"PATH=/usr/bin:/bin"};
        spec.work_dir = work;
        spec.jail_root = root;
        spec.limits.wall_timeout_s = 60;
        std::string failure;
        try {
          const JailResult r = vime::sandbox::run_in_jail(spec);
          if (r.exit_code != 0 || r.stdout_text != word + "\n" || !r.stderr_text.empty()) {
            failure = word + ": exit " + std::to_string(r.exit_code.value_or(-1)) + " signal " +
                      std::to_string(r.signal.value_or(0)) + " stdout '" + r.stdout_text +
                      "' stderr '" + r.stderr_text + "'";
          }
        } catch (const std::exception& e) {
          failure = word + ": " + e.what();
        }
        if (failure.empty()) {
          ++ok;
        } else {
          std::lock_guard lock(failure_mutex);
          failures.push_back(failure);
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  for (auto& t : churners) t.join();
  std::error_code ec;
  fs::remove_all(base, ec);

  WARN(kCallers * kRunsPerCaller << " sandboxed runs in " << seconds << " s while "
                                 << threads_started << " other threads started and ended");
  for (size_t i = 0; i < failures.size() && i < 5; ++i) UNSCOPED_INFO(failures[i]);
  CHECK(failures.empty());
  CHECK(ok == kCallers * kRunsPerCaller);
}
