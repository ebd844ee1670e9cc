// What a code sandbox may use (sandbox.hpp): its resource limits and how it is isolated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vime::sandbox {

// How a run is isolated, strongest first (sandbox.hpp says what each one blocks).
enum class Isolation {
  kFull,              // user + pid + network + mount + IPC + UTS namespaces, filesystem jail
  kNoFilesystemJail,  // the namespaces without the mount jail: the host's files stay visible
  // rlimits, a process group, and uid 65534 for a root caller (else the caller's uid) only: the
  // network and the host's files are reachable, a child that calls setsid() outlives the run.
  kNone,
};
const char* isolation_name(Isolation isolation);

struct SandboxLimits {
  double wall_timeout_s = 120;  // then the whole sandbox (every process in it) is killed
  // RLIMIT_CPU per process: SIGXCPU, then SIGKILL one second later (the run's first process is
  // pid 1 of its pid namespace, which ignores SIGXCPU: it ends by the SIGKILL).
  int64_t cpu_seconds = 120;
  int64_t memory_bytes = int64_t{4} << 30;      // RLIMIT_AS per process
  int64_t file_size_bytes = int64_t{64} << 20;  // RLIMIT_FSIZE: the largest file it may write
  int64_t open_files = 64;                      // RLIMIT_NOFILE
  // RLIMIT_NPROC. Linux counts processes (and threads) per user *per user namespace* (5.14+), and
  // each run gets a fresh user namespace, so this bounds the run's own processes. Callers that are
  // root are mapped to uid 65534 first: the kernel never applies RLIMIT_NPROC to root.
  int64_t processes = 32;
  int64_t max_output_bytes =
      16384;  // kept per stream (stdout, stderr); the rest is read and dropped
};

struct SandboxOptions {
  SandboxLimits limits;
  int64_t concurrency = 32;  // runs at once across all threads; more callers wait for a slot
  // Looked up on PATH unless it holds a '/'. Empty: /usr/bin/python3 when it exists (the jail
  // shows the system's /usr; a pyenv shim or a venv elsewhere needs read_only_paths), else python3.
  std::string python;
  // Without user namespaces (or with mounts in them refused) the constructor throws; these accept
  // the weaker isolation instead, by name, as the error message says.
  bool allow_network = false;    // run with Isolation::kNone where namespaces are unavailable
  bool host_filesystem = false;  // run with Isolation::kNoFilesystemJail where mounts are refused
  // Host paths bound read-only at the same place inside the jail, besides the system's own
  // (/usr, /lib*, /bin, /sbin, /etc/ld.so.cache, ...): a Python installed elsewhere, its packages.
  std::vector<std::string> read_only_paths;
};

}  // namespace vime::sandbox
