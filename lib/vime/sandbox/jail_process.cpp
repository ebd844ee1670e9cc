#include "vime/sandbox/jail_process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <set>
#include <utility>

namespace vime::sandbox {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Inside its user namespace the sandbox is uid/gid 0 (the one id an unprivileged caller may map),
// but runs its program without capabilities (SECBIT_NOROOT, no_new_privs).
constexpr unsigned kInsideId = 0;
constexpr size_t kStackBytes = 256 * 1024;

// The child's setup steps, for JailSetupError::stage.
enum Stage : int {
  kStart,
  kIdentity,
  kSetsid,
  kMakePrivate,
  kRootTmpfs,
  kMountpoint,
  kBind,
  kRemount,
  kPivotRoot,
  kRootReadOnly,
  kStdio,
  kChdir,
  kRlimit,
  kNoNewPrivs,
  kExec,
};
constexpr std::array<const char*, kExec + 1> kStageNames = {"start",
                                                            "user namespace (identity)",
                                                            "setsid",
                                                            "mount (making / private)",
                                                            "mount (the jail's root tmpfs)",
                                                            "mount (mountpoint)",
                                                            "mount (bind)",
                                                            "mount (read-only remount)",
                                                            "pivot_root",
                                                            "mount (read-only root)",
                                                            "stdio",
                                                            "chdir",
                                                            "setrlimit",
                                                            "no_new_privs",
                                                            "exec"};

// One step of building the jail's filesystem under its root mount point.
struct JailMount {
  enum Kind { kMkdir, kTmpfs, kBindDir, kBindFile, kSymlink, kReadOnly } kind;
  std::string source;               // host path (bind), link text (symlink)
  std::string target;               // host path under the jail root
  std::string inside;               // the path inside the jail, for messages
  unsigned long remount_flags = 0;  // read-only remount of a bind; 0: none
};

// Everything the child needs, prepared before clone(): between clone() and exec the child of a
// multi-threaded process may only make async-signal-safe calls (no allocation), so it only reads
// this.
struct ChildPlan {
  int go_fd = -1, go_write_fd = -1, report_fd = -1;
  std::array<int, 3> stdio{-1, -1, -1};
  bool setsid = false, jail = false, namespaces = false, drop_groups = false;
  bool drop_root = false;  // no namespaces, called as root: become outside_uid() (65534)
  unsigned uid = 0, gid = 0;
  std::string root;
  std::vector<JailMount> mounts;
  std::string cwd;
  struct Limit {
    int resource;
    rlim_t soft, hard;
  };
  std::vector<Limit> limits;
  std::string program;
  std::vector<char*> argv, envp;  // null-terminated, pointing into JailSpec's strings
};

[[noreturn]] void report(int fd, int stage, int index) {
  const int message[3] = {stage, errno, index};
  [[maybe_unused]] ssize_t n = ::write(fd, message, sizeof message);
  ::_exit(127);
}

void set_up_jail(const ChildPlan& p) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) {
    report(p.report_fd, kMakePrivate, -1);
  }
  if (::mount("tmpfs", p.root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0) {
    report(p.report_fd, kRootTmpfs, -1);
  }
  for (size_t i = 0; i < p.mounts.size(); ++i) {
    const JailMount& m = p.mounts[i];
    const char* target = m.target.c_str();
    const int index = static_cast<int>(i);
    switch (m.kind) {
      case JailMount::kMkdir:
        if (::mkdir(target, 0755) < 0 && errno != EEXIST) report(p.report_fd, kMountpoint, index);
        continue;
      case JailMount::kSymlink:
        if (::symlink(m.source.c_str(), target) < 0) report(p.report_fd, kMountpoint, index);
        continue;
      case JailMount::kTmpfs:
        if (::mkdir(target, 0755) < 0 && errno != EEXIST) report(p.report_fd, kMountpoint, index);
        if (::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0) {
          report(p.report_fd, kBind, index);
        }
        continue;
      case JailMount::kReadOnly:
        if (::mount(nullptr, target, nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
                    nullptr) < 0) {
          report(p.report_fd, kRemount, index);
        }
        continue;
      case JailMount::kBindDir:
        if (::mkdir(target, 0755) < 0 && errno != EEXIST) report(p.report_fd, kMountpoint, index);
        break;
      case JailMount::kBindFile: {
        const int fd = ::open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) report(p.report_fd, kMountpoint, index);
        ::close(fd);
        break;
      }
    }
    if (::mount(m.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr) < 0) {
      report(p.report_fd, kBind, index);
    }
    if (m.remount_flags != 0 &&
        ::mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | m.remount_flags, nullptr) < 0) {
      report(p.report_fd, kRemount, index);
    }
  }
  // pivot_root(".", "."): the old root ends up stacked on the new one and is detached at once, so
  // nothing of the host's tree stays reachable (chroot could be escaped by a process with caps).
  if (::chdir(p.root.c_str()) < 0 || ::syscall(SYS_pivot_root, ".", ".") < 0 ||
      ::umount2(".", MNT_DETACH) < 0 || ::chdir("/") < 0) {
    report(p.report_fd, kPivotRoot, -1);
  }
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) < 0) {
    report(p.report_fd, kRootReadOnly, -1);
  }
}

int child_main(void* arg) {
  ChildPlan& p = *static_cast<ChildPlan*>(arg);  // the child's own copy of the parent's memory
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::close(p.go_write_fd);  // so a parent that died leaves EOF, not a read that never returns
  char go = 0;
  if (::read(p.go_fd, &go, 1) != 1 || go != 'g') ::_exit(127);  // the parent gave up or died
  if (p.setsid && ::setsid() < 0) report(p.report_fd, kSetsid, -1);
  // Become the namespace's mapped uid/gid: files the jail creates need an owner it can name.
  if (p.namespaces && (::setresgid(kInsideId, kInsideId, kInsideId) < 0 ||
                       ::setresuid(kInsideId, kInsideId, kInsideId) < 0 ||
                       (p.drop_groups && ::setgroups(0, nullptr) < 0))) {
    report(p.report_fd, kIdentity, -1);
  }
  if (p.drop_root && (::setgroups(0, nullptr) < 0 || ::setresgid(p.gid, p.gid, p.gid) < 0 ||
                      ::setresuid(p.uid, p.uid, p.uid) < 0)) {
    report(p.report_fd, kIdentity, -1);
  }
  if (p.jail) set_up_jail(p);
  // Raise the kept fds above 10 first, so no dup2 below clobbers one not yet moved.
  std::array<int, 4> keep{p.stdio[0], p.stdio[1], p.stdio[2], p.report_fd};
  for (int& fd : keep) {
    fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (fd < 0) report(p.report_fd, kStdio, -1);
  }
  for (int i = 0; i < 3; ++i) {
    if (::dup2(keep[i], i) < 0) report(keep[3], kStdio, -1);
  }
  if (::dup2(keep[3], 3) < 0 || ::fcntl(3, F_SETFD, FD_CLOEXEC) < 0) report(keep[3], kStdio, -1);
  p.report_fd = 3;
  // Nothing of the parent's (the trainer's sockets, files) reaches the sandboxed program.
  if (::syscall(SYS_close_range, 4U, ~0U, 0U) < 0) {
    for (int fd = 4; fd < 65536; ++fd) ::close(fd);
  }
  if (::chdir(p.cwd.c_str()) < 0) report(p.report_fd, kChdir, -1);
  for (size_t i = 0; i < p.limits.size(); ++i) {
    const rlimit value{p.limits[i].soft, p.limits[i].hard};
    if (::setrlimit(p.limits[i].resource, &value) < 0) {
      report(p.report_fd, kRlimit, static_cast<int>(i));
    }
  }
  // uid 0 of the namespace gets no capabilities at exec (SECBIT_NOROOT), and nothing it runs can
  // gain any (no_new_privs: setuid bits and file capabilities are ignored).
  if ((p.namespaces && ::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED) < 0) ||
      ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    report(p.report_fd, kNoNewPrivs, -1);
  }
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  report(p.report_fd, kExec, -1);
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd = std::exchange(o.fd, -1);
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read, write;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) {
      throw Error(std::string("code sandbox: pipe2 failed: ") + ::strerror(errno));
    }
    read = Fd(fds[0]);
    write = Fd(fds[1]);
  }
};

unsigned long mount_flags_of(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) < 0) return 0;
  unsigned long flags = 0;
  if (st.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

// The system's own paths a Python needs (merged-/usr symlinks stay symlinks).
const std::vector<std::string>& system_paths() {
  static const std::vector<std::string> paths = {"/usr",
                                                 "/lib",
                                                 "/lib64",
                                                 "/lib32",
                                                 "/libx32",
                                                 "/bin",
                                                 "/sbin",
                                                 "/etc/ld.so.cache",
                                                 "/etc/ld.so.conf",
                                                 "/etc/ld.so.conf.d",
                                                 "/etc/localtime",
                                                 "/etc/alternatives"};
  return paths;
}

std::vector<JailMount> jail_mounts(const JailSpec& spec) {
  const std::string root = spec.jail_root.string();
  std::vector<JailMount> mounts;
  std::set<std::string> made;  // inside paths already present
  made.insert("/");
  auto add_parents = [&](const std::string& inside) {
    for (size_t slash = inside.find('/', 1); slash != std::string::npos;
         slash = inside.find('/', slash + 1)) {
      const std::string dir = inside.substr(0, slash);
      if (made.insert(dir).second) mounts.push_back({JailMount::kMkdir, "", root + dir, dir});
    }
  };
  std::vector<std::string> paths = system_paths();
  paths.insert(paths.end(), spec.read_only_paths.begin(), spec.read_only_paths.end());
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = fs::symlink_status(path, ec);
    if (ec || !fs::exists(status) || path.empty() || path[0] != '/') continue;
    const std::string inside = fs::path(path).lexically_normal().string();
    if (!made.insert(inside).second) continue;
    add_parents(inside);
    const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | mount_flags_of(path);
    if (fs::is_symlink(status)) {
      mounts.push_back(
          {JailMount::kSymlink, fs::read_symlink(path, ec).string(), root + inside, inside});
    } else if (fs::is_directory(status)) {
      mounts.push_back({JailMount::kBindDir, path, root + inside, inside, ro});
    } else {
      mounts.push_back({JailMount::kBindFile, path, root + inside, inside, ro});
    }
  }
  // /dev: a small tmpfs with the four harmless devices; /tmp: the run's own directory, writable.
  mounts.push_back({JailMount::kTmpfs, "", root + "/dev", "/dev"});
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"}) {
    mounts.push_back({JailMount::kBindFile, dev, root + dev, dev});
  }
  mounts.push_back({JailMount::kReadOnly, "", root + "/dev", "/dev"});  // the devices stay writable
  const std::string work = spec.work_dir.string();
  mounts.push_back({JailMount::kBindDir, work, root + "/tmp", "/tmp",
                    MS_NOSUID | MS_NODEV | mount_flags_of(work)});
  return mounts;
}

void write_proc_file(pid_t pid, const char* name, const std::string& text) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.fd < 0 || ::write(fd.fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    if (errno == ENOENT && std::string(name) == "setgroups") return;  // kernels before 3.19
    throw JailSetupError("user namespace", errno,
                         "code sandbox: writing " + path + " failed: " + ::strerror(errno));
  }
}

std::string setup_failure_message(const JailSpec& spec, const ChildPlan& plan, int stage, int error,
                                  int index) {
  std::string what = kStageNames.at(static_cast<size_t>(stage));
  if ((stage == kMountpoint || stage == kBind || stage == kRemount) && index >= 0 &&
      static_cast<size_t>(index) < plan.mounts.size()) {
    what += " of " + plan.mounts[static_cast<size_t>(index)].inside;
  }
  if (stage == kExec) what += " of " + spec.program;
  return "code sandbox: " + what + " failed in the sandboxed child: " + ::strerror(error);
}

}  // namespace

unsigned outside_uid() { return ::geteuid() == 0 ? 65534U : ::geteuid(); }
unsigned outside_gid() { return ::geteuid() == 0 ? 65534U : ::getegid(); }

JailResult run_in_jail(const JailSpec& spec) {
  const auto start = Clock::now();
  const bool namespaces = spec.isolation != Isolation::kNone;
  ChildPlan plan;
  plan.setsid = !namespaces;  // with a pid namespace, killing its init ends every process in it
  plan.jail = spec.isolation == Isolation::kFull;
  plan.namespaces = namespaces;
  plan.drop_groups = namespaces && ::geteuid() == 0;  // root may; others must write "deny" first
  plan.drop_root = !namespaces && ::geteuid() == 0;
  plan.uid = outside_uid();
  plan.gid = outside_gid();
  plan.root = spec.jail_root.string();
  if (plan.jail) plan.mounts = jail_mounts(spec);
  plan.cwd = plan.jail ? "/tmp" : spec.work_dir.string();
  const SandboxLimits& l = spec.limits;
  auto lim = [](int64_t v) { return static_cast<rlim_t>(v < 0 ? 0 : v); };
  plan.limits = {{RLIMIT_CPU, lim(l.cpu_seconds), lim(l.cpu_seconds + 1)},
                 {RLIMIT_AS, lim(l.memory_bytes), lim(l.memory_bytes)},
                 {RLIMIT_FSIZE, lim(l.file_size_bytes), lim(l.file_size_bytes)},
                 {RLIMIT_NOFILE, lim(l.open_files), lim(l.open_files)},
                 {RLIMIT_NPROC, lim(l.processes), lim(l.processes)},
                 {RLIMIT_CORE, 0, 0}};
  plan.program = spec.program;
  for (const auto& a : spec.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  for (const auto& e : spec.env) plan.envp.push_back(const_cast<char*>(e.c_str()));
  plan.envp.push_back(nullptr);

  Pipe go, report_pipe, out, err;
  Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null_in.fd < 0) throw Error(std::string("code sandbox: /dev/null: ") + ::strerror(errno));
  plan.go_fd = go.read.fd;
  plan.go_write_fd = go.write.fd;
  plan.report_fd = report_pipe.write.fd;
  plan.stdio = {null_in.fd, out.write.fd, err.write.fd};

  int flags = SIGCHLD;
  if (namespaces) {
    flags |= CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
  }
  if (plan.jail) flags |= CLONE_NEWNS;
  auto stack = std::make_unique<char[]>(kStackBytes);
  const pid_t pid = ::clone(child_main, stack.get() + kStackBytes, flags, &plan);
  if (pid < 0) {
    const int e = errno;
    throw JailSetupError(namespaces ? "namespaces" : "fork", e,
                         std::string("code sandbox: clone(") +
                             (namespaces ? "new user, pid, network namespaces" : "") +
                             ") failed: " + ::strerror(e));
  }
  go.read.reset();
  report_pipe.write.reset();
  out.write.reset();
  err.write.reset();
  null_in.reset();
  auto kill_and_reap = [&] {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  };
  try {
    if (namespaces) {
      const std::string inside = std::to_string(kInsideId);
      if (!plan.drop_groups) write_proc_file(pid, "setgroups", "deny");
      write_proc_file(pid, "uid_map", inside + " " + std::to_string(outside_uid()) + " 1\n");
      write_proc_file(pid, "gid_map", inside + " " + std::to_string(outside_gid()) + " 1\n");
    }
  } catch (...) {
    kill_and_reap();
    throw;
  }
  [[maybe_unused]] ssize_t w = ::write(go.write.fd, "g", 1);
  go.write.reset();
  int message[3] = {0, 0, 0};
  ssize_t got;
  do {
    got = ::read(report_pipe.read.fd, message, sizeof message);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof message)) {
    kill_and_reap();
    throw JailSetupError(kStageNames.at(static_cast<size_t>(message[0])), message[1],
                         setup_failure_message(spec, plan, message[0], message[1], message[2]));
  }

  JailResult result;
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  bool out_open = true, err_open = true, exited = false, group_killed = false;
  int status = 0;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(l.wall_timeout_s));
  auto kill_all = [&] {
    if (!namespaces) ::kill(-pid, SIGKILL);  // its process group (setsid)
    ::kill(pid, SIGKILL);                    // with namespaces: init of its pid namespace
  };
  auto drain = [&](int fd, bool& open, std::string& text, int64_t& bytes) {
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      open = false;
      return;
    }
    bytes += n;
    const size_t room = static_cast<size_t>(std::max<int64_t>(0, l.max_output_bytes)) - text.size();
    text.append(buf, std::min(room, static_cast<size_t>(n)));
  };
  while (out_open || err_open || !exited) {
    const auto now = Clock::now();
    if (now >= deadline) {
      if (result.timed_out) break;  // killed 2 s ago and the pipes are still open: give up on them
      result.timed_out = true;
      kill_all();
      deadline = now + std::chrono::seconds(2);
    }
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out.read.fd, POLLIN, 0};
    if (err_open) fds[n++] = {err.read.fd, POLLIN, 0};
    if (!exited && pidfd.fd >= 0) fds[n++] = {pidfd.fd, POLLIN, 0};
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    if (!exited && pidfd.fd < 0) wait = std::min<int64_t>(wait, 20);  // no pidfd: poll waitpid
    if (::poll(fds, static_cast<nfds_t>(n), static_cast<int>(wait)) < 0 && errno != EINTR) {
      kill_all();
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == out.read.fd) {
        drain(out.read.fd, out_open, result.stdout_text, result.stdout_bytes);
      } else if (fds[i].fd == err.read.fd) {
        drain(err.read.fd, err_open, result.stderr_text, result.stderr_bytes);
      }
    }
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    // Without a pid namespace, what it left running in its group dies with it.
    if (exited && !namespaces && !group_killed) {
      ::kill(-pid, SIGKILL);
      group_killed = true;
    }
  }
  if (!exited) {
    kill_all();
    ::waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

const char* isolation_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::kFull:
      return "full (user, pid, network, mount namespaces; filesystem jail)";
    case Isolation::kNoFilesystemJail:
      return "namespaces without the filesystem jail (host files readable)";
    case Isolation::kNone:
      return "none (rlimits and a process group only; network and host files reachable)";
  }
  return "unknown";
}

}  // namespace vime::sandbox
