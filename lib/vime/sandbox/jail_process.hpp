// One process started inside the sandbox's namespaces and limits, its output collected: the
// mechanism under sandbox.hpp, which owns the directories, the slots and the policy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vime/error.hpp"
#include "vime/sandbox/sandbox_options.hpp"

namespace vime::sandbox {

struct JailSpec {
  Isolation isolation = Isolation::kFull;
  std::string program;              // absolute path (the same inside the jail: /usr is bound there)
  std::vector<std::string> argv;    // argv[0] included
  std::vector<std::string> env;     // "KEY=value", the whole environment
  std::filesystem::path work_dir;   // host directory: the cwd; /tmp inside the jail
  std::filesystem::path jail_root;  // host directory, empty: the jail's root mount point
  std::vector<std::string> read_only_paths;  // host paths bound read-only inside the jail
  SandboxLimits limits;
};

struct JailResult {
  std::string stdout_text, stderr_text;
  int64_t stdout_bytes = 0, stderr_bytes = 0;  // written in all, kept or not
  std::optional<int> exit_code;                // it exited
  std::optional<int> signal;                   // it was killed by this signal
  bool timed_out = false;                      // killed at limits.wall_timeout_s
  double seconds = 0;
};

// The child could not be set up (a namespace, a mount, an rlimit, the exec). `stage` names the
// step ("user namespace", "mount", "exec", ...), `error` is its errno.
class JailSetupError : public Error {
 public:
  JailSetupError(std::string stage, int error, const std::string& message)
      : Error(message), stage(std::move(stage)), error(error) {}
  std::string stage;
  int error;
};

// Runs spec.program and waits for it (and, with namespaces, everything it started) to end or
// time out. Throws JailSetupError when the child cannot be set up, vime::Error on a host failure
// (pipes, fork). Safe to call from many threads at once.
JailResult run_in_jail(const JailSpec& spec);

// The uid and gid the sandbox runs as, outside its user namespace: the caller's own, or 65534
// (nobody) when the caller is root, so that RLIMIT_NPROC applies and root's files are out of reach.
unsigned outside_uid();
unsigned outside_gid();

}  // namespace vime::sandbox
