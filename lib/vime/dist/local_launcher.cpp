#include "vime/dist/local_launcher.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <optional>

#include "vime/core/args_lookup.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/error.hpp"

extern char** environ;

namespace vime::dist {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kKillGrace = std::chrono::seconds(5);
constexpr size_t kMaxPendingLine = 64 * 1024;  // a longer line without '\n' is written in pieces

std::string self_exe() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw Error(std::string("cannot resolve /proc/self/exe: ") + ::strerror(errno));
  return std::string(path, static_cast<size_t>(n));
}

// A port free now on every interface; rank 0 binds it moments later (single node only).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("cannot pick a rendezvous port: ") + ::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(std::string("cannot pick a rendezvous port: ") + ::strerror(err) +
                "; give --master-port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// SIGCHLD, SIGINT and SIGTERM wake the poll loop through a self-pipe: a rank's death is seen at
// once (so the first rank to fail is the one named), a signal to the launcher is forwarded.
int g_wake_fd = -1;
volatile sig_atomic_t g_stop_signal = 0;

void on_signal(int sig) {
  if (sig != SIGCHLD) g_stop_signal = sig;
  const int saved = errno;
  const char byte = 0;
  ssize_t ignored = ::write(g_wake_fd, &byte, 1);
  (void)ignored;
  errno = saved;
}

class SignalRouting {
 public:
  SignalRouting() {
    if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
      throw Error(std::string("launcher: pipe(): ") + ::strerror(errno));
    }
    g_wake_fd = pipe_[1];
    g_stop_signal = 0;
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      struct sigaction action {};
      action.sa_handler = on_signal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = kSignals[i] == SIGCHLD ? SA_NOCLDSTOP : 0;
      ::sigaction(kSignals[i], &action, &previous_[i]);
    }
  }
  ~SignalRouting() {
    for (size_t i = 0; i < std::size(kSignals); ++i)
      ::sigaction(kSignals[i], &previous_[i], nullptr);
    g_wake_fd = -1;
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  SignalRouting(const SignalRouting&) = delete;
  SignalRouting& operator=(const SignalRouting&) = delete;
  int read_fd() const { return pipe_[0]; }
  void drain() const {
    char buffer[64];
    while (::read(pipe_[0], buffer, sizeof(buffer)) > 0) {
    }
  }

 private:
  static constexpr int kSignals[] = {SIGCHLD, SIGINT, SIGTERM};
  int pipe_[2] = {-1, -1};
  struct sigaction previous_[std::size(kSignals)]{};
};

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  int out_fd = -1;      // the read end of the rank's stdout+stderr
  std::string pending;  // a line not yet ended by '\n'
  std::optional<int> status;
};

// Everything the child needs is built before fork(): after it only async-signal-safe calls.
struct ExecImage {
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;
};

ExecImage make_image(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& vars) {
  ExecImage image;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [name, value] : vars) overridden = overridden || name == key;
    if (!overridden) image.env_strings.emplace_back(entry);
  }
  for (const auto& [name, value] : vars) image.env_strings.push_back(name + "=" + value);
  for (const auto& a : argv) image.argv.push_back(const_cast<char*>(a.c_str()));
  image.argv.push_back(nullptr);
  for (auto& e : image.env_strings) image.envp.push_back(e.data());
  image.envp.push_back(nullptr);
  return image;
}

// Forks one rank in its own process group (so Ctrl-C reaches it once, through the launcher, and
// a teardown reaches its own children), stdout and stderr into one pipe, SIGKILL on the
// launcher's death.
RankProcess spawn_rank(int rank, const std::vector<std::string>& argv,
                       const std::vector<std::pair<std::string, std::string>>& vars) {
  const ExecImage image = make_image(argv, vars);
  int out[2], error_pipe[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw Error(std::string("pipe(): ") + ::strerror(errno));
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw Error(std::string("pipe(): ") + ::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {out[0], out[1], error_pipe[0], error_pipe[1]}) ::close(fd);
    throw Error("cannot start rank " + std::to_string(rank) + ": fork(): " + ::strerror(err));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took effect
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::execve(image.argv[0], image.argv.data(), image.envp.data());
    const int err = errno;
    ssize_t ignored = ::write(error_pipe[1], &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before anyone signals it
  ::close(out[1]);
  ::close(error_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(error_pipe[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR) {
  }
  ::close(error_pipe[0]);
  if (n > 0) {
    ::close(out[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw Error("cannot start rank " + std::to_string(rank) + ": " + argv[0] + ": " +
                ::strerror(child_errno));
  }
  RankProcess p;
  p.rank = rank;
  p.pid = pid;
  p.out_fd = out[0];
  return p;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "stopped";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

bool failed(int status) { return !WIFEXITED(status) || WEXITSTATUS(status) != 0; }

void write_line(std::ostream& console, int rank, std::string_view line) {
  console << "[rank " << rank << "] " << line << '\n';
}

// Reads what is there; writes each complete line with its prefix. False at EOF (the pipe closed).
bool pump(RankProcess& p, std::ostream& console) {
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(p.out_fd, buffer, sizeof(buffer))) < 0 && errno == EINTR) {
  }
  if (n <= 0) {
    if (!p.pending.empty()) write_line(console, p.rank, p.pending);
    p.pending.clear();
    ::close(p.out_fd);
    p.out_fd = -1;
    console.flush();
    return false;
  }
  p.pending.append(buffer, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = p.pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    write_line(console, p.rank, std::string_view(p.pending).substr(start, nl - start));
  }
  p.pending.erase(0, start);
  if (p.pending.size() > kMaxPendingLine) {
    write_line(console, p.rank, p.pending);
    p.pending.clear();
  }
  console.flush();
  return true;
}

void signal_live(std::vector<RankProcess>& ranks, int sig) {
  for (const auto& p : ranks) {
    if (!p.status) ::kill(-p.pid, sig);
  }
}

int live_count(const std::vector<RankProcess>& ranks) {
  int n = 0;
  for (const auto& p : ranks) n += p.status ? 0 : 1;
  return n;
}

std::string plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::optional<LocalLaunchPlan> local_launch_plan(const Args& args,
                                                 const std::vector<std::string>& argv,
                                                 int visible_gpus) {
  const auto nodes_flag = core::int_if_set(args, "actor_num_nodes");
  std::optional<int64_t> gpus_flag;
  if (core::flag_set(args, "actor_num_gpus_per_node")) {
    if (args.source("actor_num_gpus_per_node") == ArgSource::kCommandLine) {
      gpus_flag = args.get_int("actor_num_gpus_per_node");
    }
  }
  const int64_t nodes = nodes_flag.value_or(1);
  const int64_t gpus = gpus_flag.value_or(1);
  if (nodes < 1) throw UsageError("--actor-num-nodes " + std::to_string(nodes) + " must be >= 1");
  if (gpus < 1) {
    throw UsageError("--actor-num-gpus-per-node " + std::to_string(gpus) + " must be >= 1");
  }

  const RankEnv env = rank_env_from_environment(args);
  if (env.launcher != "single") {
    if (gpus_flag && nodes * gpus != env.world_size) {
      throw UsageError(env.launcher + " started " + std::to_string(env.world_size) +
                       " ranks but --actor-num-nodes " + std::to_string(nodes) +
                       " x --actor-num-gpus-per-node " + std::to_string(gpus) + " asks for " +
                       std::to_string(nodes * gpus) + "; make them agree");
    }
    return std::nullopt;  // already a rank
  }
  if (nodes * gpus == 1) return std::nullopt;
  if (visible_gpus > 0 && gpus > visible_gpus) {
    throw UsageError("--actor-num-gpus-per-node " + std::to_string(gpus) + " starts " +
                     std::to_string(gpus) + " ranks on this node, but only " +
                     std::to_string(visible_gpus) +
                     " GPU(s) are visible (CUDA_VISIBLE_DEVICES); lower it to at most " +
                     std::to_string(visible_gpus));
  }
  LocalLaunchPlan plan;
  plan.num_nodes = static_cast<int>(nodes);
  plan.gpus_per_node = static_cast<int>(gpus);
  const auto node_rank = core::int_if_set(args, "node_rank");
  const auto master_addr = core::string_if_set(args, "master_addr");
  const auto master_port = core::int_if_set(args, "master_port");
  if (nodes > 1) {
    const std::string n = std::to_string(nodes);
    if (!node_rank) {
      throw UsageError("--actor-num-nodes " + n +
                       " runs the same command on every node with --node-rank 0.." +
                       std::to_string(nodes - 1) + " (0 on the node --master-addr names); " +
                       "--node-rank is missing");
    }
    if (!master_addr) {
      throw UsageError("--actor-num-nodes " + n +
                       " needs --master-addr: the address of node 0, reachable from every node");
    }
    if (!master_port) {
      throw UsageError("--actor-num-nodes " + n +
                       " needs --master-port: a port free on node 0, the same on every node");
    }
  }
  if (node_rank && (*node_rank < 0 || *node_rank >= nodes)) {
    throw UsageError("--node-rank " + std::to_string(*node_rank) + " is not a node of " +
                     "--actor-num-nodes " + std::to_string(nodes) + " (0.." +
                     std::to_string(nodes - 1) + ")");
  }
  plan.node_rank = static_cast<int>(node_rank.value_or(0));
  if (master_addr) plan.master_addr = *master_addr;
  plan.master_port = env.master_port;  // --master-port, checked by rank_env
  if (argv.empty()) throw Error("local_launch_plan: empty argv");
  plan.argv = argv;
  plan.argv[0] = self_exe();
  return plan;
}

int launch_local_ranks(const LocalLaunchPlan& plan, std::ostream& console) {
  if (plan.num_nodes < 1 || plan.gpus_per_node < 1 || plan.node_rank < 0 ||
      plan.node_rank >= plan.num_nodes || plan.argv.empty()) {
    throw Error("launch_local_ranks: inconsistent plan (" + std::to_string(plan.num_nodes) +
                " nodes, " + std::to_string(plan.gpus_per_node) + " ranks per node, node " +
                std::to_string(plan.node_rank) + ")");
  }
  if (plan.master_port == 0 && plan.num_nodes > 1) {
    throw UsageError("--actor-num-nodes " + std::to_string(plan.num_nodes) +
                     " needs --master-port: the same port on every node");
  }
  const int world = plan.num_nodes * plan.gpus_per_node;
  const int port = plan.master_port != 0 ? plan.master_port : free_port();

  SignalRouting signals;
  std::vector<RankProcess> ranks;
  try {
    for (int local = 0; local < plan.gpus_per_node; ++local) {
      const int rank = plan.node_rank * plan.gpus_per_node + local;
      ranks.push_back(spawn_rank(rank, plan.argv,
                                 {{"VIME_RANK", std::to_string(rank)},
                                  {"VIME_WORLD_SIZE", std::to_string(world)},
                                  {"VIME_LOCAL_RANK", std::to_string(local)},
                                  {"VIME_LOCAL_WORLD_SIZE", std::to_string(plan.gpus_per_node)},
                                  {"VIME_NODE_RANK", std::to_string(plan.node_rank)},
                                  {"VIME_MASTER_ADDR", plan.master_addr},
                                  {"VIME_MASTER_PORT", std::to_string(port)}}));
    }
  } catch (...) {
    for (auto& p : ranks) {
      ::kill(-p.pid, SIGKILL);
      while (::waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ::close(p.out_fd);
    }
    throw;
  }

  int result = 0;
  bool stopping = false, killed = false;
  Clock::time_point kill_at{};
  std::optional<Clock::time_point> drain_until;
  while (true) {
    std::vector<pollfd> fds{{signals.read_fd(), POLLIN, 0}};
    std::vector<RankProcess*> owners{nullptr};
    for (auto& p : ranks) {
      if (p.out_fd >= 0) {
        fds.push_back({p.out_fd, POLLIN, 0});
        owners.push_back(&p);
      }
    }
    const int ready = ::poll(fds.data(), fds.size(), 100);
    if (ready > 0) {
      if (fds[0].revents != 0) signals.drain();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) pump(*owners[i], console);
      }
    }

    for (auto& p : ranks) {
      if (p.status) continue;
      int status = 0;
      pid_t r;
      while ((r = ::waitpid(p.pid, &status, WNOHANG)) < 0 && errno == EINTR) {
      }
      if (r != p.pid) continue;
      p.status = status;
      if (!stopping && failed(status)) {
        const int others = live_count(ranks);
        console << plan.program << ": rank " << p.rank << " " << describe(status)
                << (others == 1  ? "; stopping the other rank"
                    : others > 1 ? "; stopping the other " + plural(others, "rank")
                                 : "")
                << '\n';
        console.flush();
        result = exit_code_of(status);
        stopping = true;
        kill_at = Clock::now() + kKillGrace;
        signal_live(ranks, SIGTERM);
      }
    }

    if (const int sig = g_stop_signal; sig != 0) {
      g_stop_signal = 0;
      if (!stopping) {
        console << plan.program << ": got " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
                << "; stopping " << plural(live_count(ranks), "rank") << '\n';
        console.flush();
        result = 128 + sig;
        stopping = true;
        kill_at = Clock::now() + kKillGrace;
        signal_live(ranks, sig);
      } else if (!killed) {  // a second signal: no more grace
        signal_live(ranks, SIGKILL);
        killed = true;
      }
    }
    if (stopping && !killed && Clock::now() >= kill_at && live_count(ranks) > 0) {
      console << plan.program << ": " << plural(live_count(ranks), "rank")
              << " still running after " << kKillGrace.count() << " s; killing them\n";
      console.flush();
      signal_live(ranks, SIGKILL);
      killed = true;
    }

    if (live_count(ranks) == 0) {
      // Output still in the pipes comes out; a grandchild holding a pipe open does not hold us.
      if (!drain_until) drain_until = Clock::now() + std::chrono::seconds(1);
      bool open = false;
      for (const auto& p : ranks) open = open || p.out_fd >= 0;
      if (!open || Clock::now() >= *drain_until) break;
    }
  }
  for (auto& p : ranks) {
    if (p.out_fd < 0) continue;
    if (!p.pending.empty()) write_line(console, p.rank, p.pending);
    ::close(p.out_fd);
  }
  console.flush();
  return result;
}

}  // namespace vime::dist
