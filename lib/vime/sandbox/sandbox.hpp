// A sandbox for untrusted code (a model's tool calls): each run is a fresh python3 process in a
// fresh temporary directory, removed afterwards, that cannot reach the network or the host's files
// and cannot exhaust the machine.
//
// Isolation::kFull (the default; the constructor refuses weaker isolation unless it is asked for
// by name, sandbox_options.hpp):
//   - new user, pid, network, mount, IPC and UTS namespaces (clone(2), no root needed where the
//     kernel allows unprivileged user namespaces); the code runs as an unprivileged uid without
//     capabilities (no_new_privs), as the caller's uid outside, or 65534 when the caller is root;
//   - network: a namespace with only a loopback interface that is down: every connect fails;
//   - files: a read-only tmpfs root with /usr, /lib*, /bin, /sbin and a few /etc files bound
//     read-only, a /dev of null/zero/random/urandom, and the run's directory as /tmp (the only
//     writable place, also the cwd); the host's root is detached (pivot_root), so /etc/passwd,
//     /home, /proc and the caller's files do not exist inside;
//   - processes: RLIMIT_NPROC counts the run's own processes (a fresh user namespace per run), so
//     a fork bomb stops at `processes`; the run is pid 1 of its pid namespace, so killing it kills
//     every process it started, setsid() or not;
//   - rlimits on CPU seconds, address space, file size, open files; the environment is replaced by
//     a fixed one; a wall-clock timeout kills the run; output beyond max_output_bytes per stream is
//     read and dropped; at most `concurrency` runs at once.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "vime/sandbox/jail_process.hpp"
#include "vime/sandbox/sandbox_options.hpp"

namespace vime::sandbox {

// The option names the refusal messages give (the retool plugin's --custom-config-path keys).
inline constexpr const char* kAllowNetworkKey = "sandbox_allow_network";
inline constexpr const char* kHostFilesystemKey = "sandbox_host_filesystem";
inline constexpr const char* kReadOnlyPathsKey = "sandbox_read_only_paths";

class Sandbox {
 public:
  // Finds the python, then starts one run to learn what isolation this machine allows. Throws
  // vime::UsageError, naming the option to set, when it allows less than kFull and the options do
  // not accept that, or when the python cannot run inside.
  explicit Sandbox(SandboxOptions options);
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Writes `script` to code.py in a fresh directory and runs `python3 code.py` there; blocks for a
  // free slot first. A run that fails, times out or is killed is a result, not an exception;
  // vime::Error only for a host failure (no temp dir, no pipes).
  JailResult run_python(std::string_view script) const;
  // Where code.py is as the program sees it ("/tmp/code.py" in the jail): part of tracebacks.
  std::string script_path_inside(const std::filesystem::path& work_dir) const;

  Isolation isolation() const { return isolation_; }
  const SandboxOptions& options() const { return options_; }
  const std::string& python() const { return python_; }

 private:
  JailResult run_unlimited_slots(std::string_view script) const;

  SandboxOptions options_;
  std::string python_;
  Isolation isolation_ = Isolation::kFull;
  mutable std::mutex mutex_;
  mutable std::condition_variable slot_free_;
  mutable int64_t running_ = 0;
};

}  // namespace vime::sandbox
