// A child process vime starts and owns (a vLLM engine, vllm-router, `vime serve`): argv without a
// shell, extra environment variables, stdout+stderr appended to a log file, its own process group
// (so terminate() reaches its workers too) and a parent-death signal (so it dies with vime, even
// after `kill -9`). Live children are in the process-wide registry (child_registry.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vime::launch {

struct ChildSpec {
  std::string name;               // for messages: "engine 1", "vllm-router"
  std::vector<std::string> argv;  // argv[0] is looked up on PATH unless it holds a '/'
  std::vector<std::pair<std::string, std::string>> env;  // set on top of vime's environment
  std::filesystem::path log_path;  // stdout+stderr (appended; parent dirs are created)
  int parent_death_signal = 15;    // SIGTERM: lets vLLM stop its own workers
};

class ChildProcess {
 public:
  // Starts the process; throws vime::Error naming the program when it is not found or cannot run.
  explicit ChildProcess(ChildSpec spec);
  ~ChildProcess();  // terminate(5 s)
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const ChildSpec& spec() const { return spec_; }
  bool is_running();
  // The waitpid() status once it exited; nullopt while it runs.
  std::optional<int> wait_status();
  // "exited with code 1", "killed by signal 9 (Killed)", "running".
  std::string describe_exit();
  // SIGTERM to the process group, SIGKILL after `grace`; returns when the process is reaped.
  void terminate(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // The last `lines` lines of the log file (empty when there is none).
  std::string log_tail(int lines = 30) const;

 private:
  void reap(int options);

  ChildSpec spec_;
  pid_t pid_ = -1;
  std::mutex mutex_;
  std::optional<int> status_;
};

// The absolute path `program` runs as: itself when it holds a '/', else the first executable match
// on PATH; nullopt when there is none.
std::optional<std::string> find_program(const std::string& program);
// A command given in an environment variable (VIME_VLLM_COMMAND="/opt/vime serve") as argv: split
// on spaces, no shell quoting.
std::vector<std::string> split_command_line(std::string_view text);

}  // namespace vime::launch
