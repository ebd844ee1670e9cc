#include "vime/launch/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include "vime/error.hpp"
#include "vime/launch/child_registry.hpp"

extern char** environ;

namespace vime::launch {
namespace {

namespace fs = std::filesystem;

// PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the process. Children are forked
// on one thread that lives as long as vime, so a child started from a short-lived worker thread
// does not die with that thread. The state is leaked on purpose: it must outlive static
// destructors.
class Spawner {
 public:
  static Spawner& instance() {
    static Spawner* spawner = new Spawner();
    return *spawner;
  }
  template <class F>
  auto run(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([&task] { task(); });
    }
    cv_.notify_one();
    return result.get();
  }

 private:
  Spawner() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
};

constexpr std::chrono::seconds kExecDeadline{30};

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Everything the child needs is built before fork(): after it only async-signal-safe calls are
// allowed (vime has other threads).
struct ExecImage {
  std::string path;
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;
};

ExecImage make_image(const ChildSpec& spec, std::string path) {
  ExecImage image;
  image.path = std::move(path);
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [name, value] : spec.env) overridden = overridden || name == key;
    if (!overridden) image.env_strings.emplace_back(entry);
  }
  for (const auto& [name, value] : spec.env) image.env_strings.push_back(name + "=" + value);
  for (const auto& a : spec.argv) image.argv.push_back(const_cast<char*>(a.c_str()));
  image.argv.push_back(nullptr);
  for (auto& e : image.env_strings) image.envp.push_back(e.data());
  image.envp.push_back(nullptr);
  return image;
}

pid_t spawn(const ChildSpec& spec, const ExecImage& image, int log_fd) {
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0)
    throw Error("cannot start " + spec.name + ": pipe(): " + ::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    throw Error("cannot start " + spec.name + ": fork(): " + ::strerror(err));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
    if (::getppid() != parent) ::_exit(127);  // vime died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::signal(sig, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(image.path.c_str(), image.argv.data(), image.envp.data());
    const int err = errno;
    ssize_t ignored = ::write(error_pipe[1], &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before anyone signals it
  ::close(error_pipe[1]);
  // The pipe closes at exec or carries exec's errno. A child stuck before its exec must not hold
  // vime: after kExecDeadline it is killed and the start fails.
  const auto deadline = std::chrono::steady_clock::now() + kExecDeadline;
  pollfd ready{error_pipe[0], POLLIN, 0};
  int polled;
  do {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    polled = ::poll(&ready, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
  } while (polled < 0 && errno == EINTR);
  if (polled == 0) {
    ::close(error_pipe[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw Error("cannot start " + spec.name + ": " + image.path + " did not reach exec within " +
                std::to_string(kExecDeadline.count()) + " s");
  }
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(error_pipe[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR) {
  }
  ::close(error_pipe[0]);
  if (n > 0) {
    ::waitpid(pid, nullptr, 0);
    throw Error("cannot start " + spec.name + ": " + image.path + ": " + ::strerror(child_errno));
  }
  return pid;
}

}  // namespace

std::optional<std::string> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (is_executable(program)) return program;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (is_executable(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

ChildProcess::ChildProcess(ChildSpec spec) : spec_(std::move(spec)) {
  if (spec_.name.empty()) spec_.name = spec_.argv.empty() ? "child process" : spec_.argv[0];
  if (spec_.argv.empty()) throw Error("cannot start " + spec_.name + ": empty command line");
  const auto path = find_program(spec_.argv[0]);
  if (!path) {
    throw Error("cannot start " + spec_.name + ": '" + spec_.argv[0] + "' is not " +
                (spec_.argv[0].find('/') != std::string::npos ? "an executable file" : "on PATH"));
  }
  if (spec_.log_path.empty()) spec_.log_path = "/dev/null";
  std::error_code ec;
  if (spec_.log_path.has_parent_path()) fs::create_directories(spec_.log_path.parent_path(), ec);
  const int log_fd =
      ::open(spec_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw Error("cannot start " + spec_.name + ": cannot open its log file " +
                spec_.log_path.string() + ": " + ::strerror(errno));
  }
  const ExecImage image = make_image(spec_, *path);
  try {
    pid_ = Spawner::instance().run([&] {
      const pid_t pid = spawn(spec_, image, log_fd);
      register_child_group(pid);  // on the spawner thread: no signal can see an unlisted child
      return pid;
    });
  } catch (...) {
    ::close(log_fd);
    throw;
  }
  ::close(log_fd);
}

ChildProcess::~ChildProcess() {
  try {
    terminate();
  } catch (...) {
  }
}

void ChildProcess::reap(int options) {
  if (status_ || pid_ <= 0) return;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, options)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    status_ = status;
    // Members that outlive the leader (an engine's workers) go with it. The pid cannot be reused
    // yet: it was reaped just now.
    ::kill(-pid_, SIGKILL);
  } else if (r < 0) {
    status_ = -1;  // reaped elsewhere (vime's exit cleanup): gone, status unknown
  }
  if (status_) unregister_child_group(pid_);
}

bool ChildProcess::is_running() {
  std::lock_guard lock(mutex_);
  reap(WNOHANG);
  return !status_;
}

std::optional<int> ChildProcess::wait_status() {
  std::lock_guard lock(mutex_);
  reap(WNOHANG);
  return status_;
}

std::string ChildProcess::describe_exit() {
  const auto status = wait_status();
  if (!status) return "running";
  if (*status == -1) return "exited";
  if (WIFEXITED(*status)) return "exited with code " + std::to_string(WEXITSTATUS(*status));
  if (WIFSIGNALED(*status)) {
    const int sig = WTERMSIG(*status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "stopped";
}

void ChildProcess::terminate(std::chrono::milliseconds grace) {
  std::lock_guard lock(mutex_);
  if (pid_ <= 0 || status_) return;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    reap(WNOHANG);
    if (status_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  reap(0);
}

std::string ChildProcess::log_tail(int lines) const {
  std::ifstream in(spec_.log_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff take = std::min<std::streamoff>(size, 64 * 1024);
  in.seekg(size - take);
  std::string text(static_cast<size_t>(take), '\0');
  in.read(text.data(), take);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t start = text.size();
  for (int found = 0; start > 0;) {
    const size_t newline = text.rfind('\n', start - 1);
    if (newline == std::string::npos) {
      start = 0;
    } else if (++found == lines) {
      start = newline + 1;
      break;
    } else {
      start = newline;
    }
  }
  return text.substr(start);
}

std::vector<std::string> split_command_line(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace vime::launch
