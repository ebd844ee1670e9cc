#include "vime/launch/child_registry.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "vime/error.hpp"

namespace vime::launch {
namespace {

// Lock-free atomics in static storage: the signal handlers read them without locks or allocation.
constexpr int kMaxGroups = 1024;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};
static_assert(std::atomic<pid_t>::is_always_lock_free);

constexpr int kGracefulSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
constexpr int kMaxSignal = 65;
struct sigaction g_previous[kMaxSignal];
std::terminate_handler g_previous_terminate = nullptr;

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// A group is gone when no member is left; a zombie leader counts as a member until reaped, so reap
// it first (it is our child).
bool group_alive(pid_t pgid) {
  ::waitpid(pgid, nullptr, WNOHANG);
  return ::kill(-pgid, 0) == 0 || errno == EPERM;
}

void on_signal(int sig) {
  const int saved_errno = errno;
  bool fatal = true;
  for (int s : kGracefulSignals) fatal = fatal && s != sig;
  kill_registered_children(fatal ? 0 : 2000);
  // Re-raise with the action that was there before ours: the default (terminate, core dump) or a
  // handler someone else installed.
  ::sigaction(sig, &g_previous[sig], nullptr);
  ::raise(sig);
  errno = saved_errno;
}

void on_terminate() {
  kill_registered_children(2000);
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

void on_exit() { kill_registered_children(5000); }

void install(int sig) {
  struct sigaction old {};
  ::sigaction(sig, nullptr, &old);
  // A signal ignored at start (nohup, a background job) stays ignored.
  if (old.sa_handler == SIG_IGN && !(old.sa_flags & SA_SIGINFO)) return;
  g_previous[sig] = old;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(sig, &action, nullptr);
}

}  // namespace

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kGracefulSignals) install(sig);
    for (int sig : kFatalSignals) install(sig);
    g_previous_terminate = std::set_terminate(on_terminate);
    std::atexit(on_exit);
  });
}

void register_child_group(pid_t pgid) {
  install_cleanup_handlers();
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
  throw Error("vime launch: more than " + std::to_string(kMaxGroups) +
              " child processes are running; stop some before starting more");
}

void unregister_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void kill_registered_children(int grace_ms) {
  bool any = false;
  for (auto& slot : g_groups) {
    const pid_t pgid = slot.load();
    if (pgid > 0) {
      ::kill(-pgid, grace_ms > 0 ? SIGTERM : SIGKILL);
      any = true;
    }
  }
  if (!any) return;
  for (int waited = 0; grace_ms > 0 && waited < grace_ms; waited += 20) {
    bool alive = false;
    for (auto& slot : g_groups) {
      const pid_t pgid = slot.load();
      if (pgid > 0) alive = alive || group_alive(pgid);
    }
    if (!alive) break;
    sleep_ms(20);
  }
  for (auto& slot : g_groups) {
    const pid_t pgid = slot.exchange(0);
    if (pgid > 0) {
      ::kill(-pgid, SIGKILL);
      ::waitpid(pgid, nullptr, WNOHANG);
    }
  }
}

}  // namespace vime::launch
