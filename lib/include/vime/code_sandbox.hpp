// Untrusted code for plugins (a model's tool calls, as retool's): each run is a fresh python3 in a
// fresh temporary directory, removed afterwards, without the network or the host's files and
// within rlimits and a wall clock. lib/vime/sandbox/code_sandbox.cpp implements it over
// lib/vime/sandbox/sandbox.hpp, which says what each isolation blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vime {

// The option names the sandbox's refusal messages ask the user to set: a plugin reads these options
// from its config under these names (retool's --custom-config-path keys).
inline constexpr const char* kSandboxAllowNetworkKey = "sandbox_allow_network";
inline constexpr const char* kSandboxHostFilesystemKey = "sandbox_host_filesystem";
inline constexpr const char* kSandboxReadOnlyPathsKey = "sandbox_read_only_paths";

struct CodeSandboxLimits {
  double wall_timeout_s = 120;                  // then every process of the run is killed
  int64_t cpu_seconds = 120;                    // RLIMIT_CPU per process
  int64_t memory_bytes = int64_t{4} << 30;      // RLIMIT_AS per process
  int64_t file_size_bytes = int64_t{64} << 20;  // RLIMIT_FSIZE: the largest file it may write
  int64_t open_files = 64;                      // RLIMIT_NOFILE
  int64_t processes = 32;                       // the run's own processes: a fork bomb stops here
  int64_t max_output_bytes = 16384;  // kept per stream (stdout, stderr); the rest is dropped
};

struct CodeSandboxOptions {
  CodeSandboxLimits limits;
  int64_t concurrency = 32;  // runs at once across all threads; more callers wait for a slot
  // Looked up on PATH unless it holds a '/'. Empty: /usr/bin/python3 when it exists, else python3.
  std::string python;
  // Where the kernel allows less than full isolation the constructor throws, unless the weaker
  // isolation is accepted here by name (the error says which).
  bool allow_network = false;    // rlimits only, where user namespaces are unavailable
  bool host_filesystem = false;  // namespaces without the filesystem jail, where mounts are refused
  // Host paths bound read-only at the same place inside the jail (a Python installed elsewhere).
  std::vector<std::string> read_only_paths;
};

struct CodeSandboxRun {
  std::string stdout_text, stderr_text;        // what was kept (limits.max_output_bytes)
  int64_t stdout_bytes = 0, stderr_bytes = 0;  // written in all, kept or not
  std::optional<int> exit_code;                // it exited
  std::optional<int> signal;                   // it was killed by this signal
  bool timed_out = false;                      // killed at limits.wall_timeout_s
  double seconds = 0;
};

class CodeSandbox {
 public:
  // Finds the python and starts one run to learn what isolation this machine allows. Throws
  // vime::UsageError, naming the option to set, when that is less than the options accept.
  explicit CodeSandbox(const CodeSandboxOptions& options);
  CodeSandbox(CodeSandbox&&) noexcept;
  CodeSandbox& operator=(CodeSandbox&&) noexcept;
  ~CodeSandbox();

  // Runs `script` as code.py with python3 in a fresh directory (its cwd), after waiting for a free
  // slot. A run that fails, times out or is killed is a result; vime::Error only for a failure of
  // the host (no temporary directory, no pipes). Thread-safe.
  CodeSandboxRun run_python(std::string_view script) const;

  const std::string& python() const;   // the python it runs
  const char* isolation_name() const;  // "full (user, pid, network, mount namespaces; ...)", ...

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime
