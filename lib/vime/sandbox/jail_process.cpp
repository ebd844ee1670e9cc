#include "vime/sandbox/jail_process.hpp"

#include <errno.h>
#include <fcntl.h>
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
#include <fstream>
#include <memory>
#include <set>
#include <utility>

#include "vime/sandbox/raw_syscall.hpp"

namespace vime::sandbox {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Inside its user namespace the sandbox is uid/gid 0 (the one id an unprivileged caller may map),
// but runs its program without capabilities (SECBIT_NOROOT, no_new_privs).
constexpr unsigned kInsideId = 0;
constexpr size_t kStackBytes = 256 * 1024;
// The child's setup (identity, mounts, exec) takes milliseconds; past this it is stuck.
constexpr std::chrono::seconds kSetupTimeout{30};
// A process sent SIGKILL ends at once unless the kernel holds it (uninterruptible sleep).
constexpr std::chrono::seconds kReapTimeout{10};

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

// Everything the child needs, prepared before clone(). The child (a copy of the parent's memory,
// no CLONE_VM) only reads this and makes raw system calls (raw_syscall.hpp says why) until exec.
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
    raw::Rlimit64 value;
  };
  std::vector<Limit> limits;
  std::string program;
  std::vector<char*> argv, envp;  // null-terminated, pointing into JailSpec's strings
};

// `result` is a raw:: call's: a negative one is reported (its errno) and ends the child.
void check(long result, int fd, int stage, int index = -1) {
  if (result >= 0) return;
  const int message[3] = {stage, static_cast<int>(-result), index};
  raw::write(fd, message, sizeof message);
  raw::exit_group(127);
}

void set_up_jail(const ChildPlan& p) {
  const int fd = p.report_fd;
  check(raw::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), fd, kMakePrivate);
  check(raw::mount("tmpfs", p.root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"), fd,
        kRootTmpfs);
  auto make_dir = [](const char* path) {
    const long r = raw::mkdir(path, 0755);
    return r == -EEXIST ? 0 : r;
  };
  for (size_t i = 0; i < p.mounts.size(); ++i) {
    const JailMount& m = p.mounts[i];
    const char* target = m.target.c_str();
    const int index = static_cast<int>(i);
    switch (m.kind) {
      case JailMount::kMkdir:
        check(make_dir(target), fd, kMountpoint, index);
        continue;
      case JailMount::kSymlink:
        check(raw::symlink(m.source.c_str(), target), fd, kMountpoint, index);
        continue;
      case JailMount::kTmpfs:
        check(make_dir(target), fd, kMountpoint, index);
        check(raw::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k"), fd,
              kBind, index);
        continue;
      case JailMount::kReadOnly:
        check(raw::mount(nullptr, target, nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
                         nullptr),
              fd, kRemount, index);
        continue;
      case JailMount::kBindDir:
        check(make_dir(target), fd, kMountpoint, index);
        break;
      case JailMount::kBindFile: {
        const long file = raw::open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        check(file, fd, kMountpoint, index);
        raw::close(static_cast<int>(file));
        break;
      }
    }
    check(raw::mount(m.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr), fd, kBind,
          index);
    if (m.remount_flags != 0) {
      check(raw::mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | m.remount_flags, nullptr),
            fd, kRemount, index);
    }
  }
  // pivot_root(".", "."): the old root ends up stacked on the new one and is detached at once, so
  // nothing of the host's tree stays reachable (chroot could be escaped by a process with caps).
  check(raw::chdir(p.root.c_str()), fd, kPivotRoot);
  check(raw::pivot_root(".", "."), fd, kPivotRoot);
  check(raw::umount2(".", MNT_DETACH), fd, kPivotRoot);
  check(raw::chdir("/"), fd, kPivotRoot);
  check(raw::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr),
        fd, kRootReadOnly);
}

int child_main(void* arg) {
  const ChildPlan& p = *static_cast<const ChildPlan*>(arg);  // the child's own copy
  // The parent blocked every signal around clone(): none of its handlers (copied, and free to take
  // its locks) may run here. The program starts with default dispositions and nothing blocked.
  for (int signal = 1; signal < 65; ++signal) raw::reset_signal(signal);  // SIGKILL/STOP: EINVAL
  raw::prctl(PR_SET_PDEATHSIG, SIGKILL);
  raw::close(p.go_write_fd);  // so a parent that died leaves EOF, not a read that never returns
  char go = 0;
  if (raw::read(p.go_fd, &go, 1) != 1 || go != 'g') raw::exit_group(127);  // the parent gave up
  int fd = p.report_fd;
  if (p.setsid) check(raw::setsid(), fd, kSetsid);
  // Become the namespace's mapped uid/gid: files the jail creates need an owner it can name.
  if (p.namespaces) {
    check(raw::setresgid(kInsideId), fd, kIdentity);
    check(raw::setresuid(kInsideId), fd, kIdentity);
    if (p.drop_groups) check(raw::drop_groups(), fd, kIdentity);
  }
  if (p.drop_root) {
    check(raw::drop_groups(), fd, kIdentity);
    check(raw::setresgid(p.gid), fd, kIdentity);
    check(raw::setresuid(p.uid), fd, kIdentity);
  }
  if (p.jail) set_up_jail(p);
  // Raise the kept fds above 10 first, so no dup3 below clobbers one not yet moved.
  std::array<int, 4> keep{p.stdio[0], p.stdio[1], p.stdio[2], fd};
  for (int& kept : keep) {
    const long moved = raw::fcntl(kept, F_DUPFD_CLOEXEC, 10);
    check(moved, fd, kStdio);
    kept = static_cast<int>(moved);
  }
  fd = keep[3];
  for (int i = 0; i < 3; ++i) check(raw::dup3(keep[i], i, 0), fd, kStdio);
  check(raw::dup3(keep[3], 3, O_CLOEXEC), fd, kStdio);
  fd = 3;
  // Nothing of the parent's (the trainer's sockets, files) reaches the sandboxed program.
  if (raw::close_range(4U, ~0U) < 0) {
    for (int open_fd = 4; open_fd < 65536; ++open_fd) raw::close(open_fd);
  }
  check(raw::chdir(p.cwd.c_str()), fd, kChdir);
  for (size_t i = 0; i < p.limits.size(); ++i) {
    check(raw::set_rlimit(p.limits[i].resource, p.limits[i].value), fd, kRlimit,
          static_cast<int>(i));
  }
  // uid 0 of the namespace gets no capabilities at exec (SECBIT_NOROOT), and nothing it runs can
  // gain any (no_new_privs: setuid bits and file capabilities are ignored).
  if (p.namespaces) {
    check(raw::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED), fd, kNoNewPrivs);
  }
  check(raw::prctl(PR_SET_NO_NEW_PRIVS, 1), fd, kNoNewPrivs);
  raw::unblock_all_signals();
  check(raw::execve(p.program.c_str(), p.argv.data(), p.envp.data()), fd, kExec);
  raw::exit_group(127);  // execve returned without an error: never
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

// Whether `fd` has input (or EOF) before `deadline`.
bool wait_readable(int fd, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the read say what is wrong
  }
}

// Waits for the child `pid` (sent SIGKILL) to end, until `deadline`: whether it was reaped.
bool reap(pid_t pid, int pidfd, int& status, Clock::time_point deadline) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    } else {
      ::usleep(10000);
    }
  }
}

// " (blocked in the kernel at futex_do_wait)": where a child that does not move is waiting.
std::string kernel_wait_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/wchan");
  std::string where;
  std::getline(in, where);
  if (where.empty() || where == "0") return "";
  return " (blocked in the kernel at " + where + ")";
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
  auto lim = [](int64_t v) { return static_cast<uint64_t>(v < 0 ? 0 : v); };
  plan.limits = {{RLIMIT_CPU, {lim(l.cpu_seconds), lim(l.cpu_seconds + 1)}},
                 {RLIMIT_AS, {lim(l.memory_bytes), lim(l.memory_bytes)}},
                 {RLIMIT_FSIZE, {lim(l.file_size_bytes), lim(l.file_size_bytes)}},
                 {RLIMIT_NOFILE, {lim(l.open_files), lim(l.open_files)}},
                 {RLIMIT_NPROC, {lim(l.processes), lim(l.processes)}},
                 {RLIMIT_CORE, {0, 0}}};
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
  // No CLONE_VM: the child writes only its own copy (of this stack, errno, the plan).
  auto stack = std::make_unique<char[]>(kStackBytes);
  sigset_t all_signals, caller_signals;
  ::sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &caller_signals);
  const pid_t pid = ::clone(child_main, stack.get() + kStackBytes, flags, &plan);
  const int clone_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &caller_signals, nullptr);
  if (pid < 0) {
    throw JailSetupError(namespaces ? "namespaces" : "fork", clone_error,
                         std::string("code sandbox: clone(") +
                             (namespaces ? "new user, pid, network namespaces" : "") +
                             ") failed: " + ::strerror(clone_error));
  }
  go.read.reset();
  report_pipe.write.reset();
  out.write.reset();
  err.write.reset();
  null_in.reset();
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  int status = 0;
  // On the way out with an error: the child cannot be left running (or unreaped, when it ends).
  auto kill_and_reap = [&] {
    ::kill(pid, SIGKILL);
    reap(pid, pidfd.fd, status, Clock::now() + kReapTimeout);
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
  // The report pipe ends (EOF) at the child's exec, or brings the step that failed.
  if (!wait_readable(report_pipe.read.fd, Clock::now() + kSetupTimeout)) {
    const std::string where = kernel_wait_of(pid);
    kill_and_reap();
    throw JailSetupError("setup", ETIMEDOUT,
                         "code sandbox: the sandboxed child did not reach its exec within " +
                             std::to_string(kSetupTimeout.count()) + " s" + where + "; killed it");
  }
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
  bool out_open = true, err_open = true, exited = false, group_killed = false;
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
    if (!reap(pid, pidfd.fd, status, Clock::now() + kReapTimeout)) {
      throw Error("code sandbox: the sandboxed run (pid " + std::to_string(pid) +
                  ") did not end within " + std::to_string(kReapTimeout.count()) + " s of SIGKILL" +
                  kernel_wait_of(pid));
    }
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
