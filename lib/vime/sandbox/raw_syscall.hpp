// The system calls jail_process.cpp's child makes between clone() and execve(), as bare syscalls.
//
// Why not glibc's wrappers: the child is a copy of a multi-threaded parent (a trainer's rollout
// workers, HTTP pools) in which only the cloning thread exists. glibc's setresuid, setresgid and
// setgroups apply the change to every thread glibc believes the process has (__nptl_setxid): they
// take the stack-list lock and signal and wait for each of the parent's threads, which never answer
// here, or wait forever on a thread the parent was creating at the time of the clone. Any wrapper
// that locks or allocates can likewise block on a lock some parent thread held at that moment.
// glibc's syscall(2) is a plain trampoline (registers in, `syscall`, errno stored in the calling
// thread's TLS on failure, which in the child is its own copy): no lock, no allocation.
//
// Each wrapper returns the kernel's result: >= 0, or -errno.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <type_traits>

namespace vime::sandbox::raw {

template <typename T>
long as_long(T value) {
  if constexpr (std::is_null_pointer_v<T>) {
    return 0;
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<long>(value);
  } else {
    return static_cast<long>(value);
  }
}

// Every argument widened to a full register, as the kernel reads it.
template <typename... Args>
long call(long number, Args... args) {
  const long result = ::syscall(number, as_long(args)...);
  return result < 0 ? -errno : result;
}

inline long setresuid(unsigned id) { return call(SYS_setresuid, id, id, id); }
inline long setresgid(unsigned id) { return call(SYS_setresgid, id, id, id); }
inline long drop_groups() { return call(SYS_setgroups, 0, nullptr); }
inline long setsid() { return call(SYS_setsid); }
inline long mount(const char* source, const char* target, const char* type, unsigned long flags,
                  const char* data) {
  return call(SYS_mount, source, target, type, flags, data);
}
inline long umount2(const char* target, int flags) { return call(SYS_umount2, target, flags); }
inline long pivot_root(const char* new_root, const char* put_old) {
  return call(SYS_pivot_root, new_root, put_old);
}
inline long chdir(const char* path) { return call(SYS_chdir, path); }
inline long mkdir(const char* path, unsigned mode) {
  return call(SYS_mkdirat, AT_FDCWD, path, mode);
}
inline long symlink(const char* text, const char* path) {
  return call(SYS_symlinkat, text, AT_FDCWD, path);
}
inline long open(const char* path, int flags, unsigned mode) {
  return call(SYS_openat, AT_FDCWD, path, flags, mode);
}
inline long close(int fd) { return call(SYS_close, fd); }
inline long close_range(unsigned first, unsigned last) {
  return call(SYS_close_range, first, last, 0);
}
inline long dup3(int from, int to, int flags) { return call(SYS_dup3, from, to, flags); }
inline long fcntl(int fd, int command, long arg) { return call(SYS_fcntl, fd, command, arg); }
inline long prctl(int option, unsigned long arg2) { return call(SYS_prctl, option, arg2, 0, 0, 0); }
// The kernel's struct rlimit64 (prlimit64 exists on every architecture; setrlimit does not).
struct Rlimit64 {
  uint64_t soft, hard;
};
inline long set_rlimit(int resource, Rlimit64 limit) {
  return call(SYS_prlimit64, 0, resource, &limit, nullptr);
}
// All-zero is SIG_DFL with no flags and an empty mask in every architecture's layout of the
// kernel's struct sigaction (handler first; it is at most four words).
inline long reset_signal(int signal) {
  const unsigned long action[4] = {0, 0, 0, 0};
  return call(SYS_rt_sigaction, signal, action, nullptr, sizeof(uint64_t));
}
inline long unblock_all_signals() {
  const uint64_t none = 0;
  return call(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none);
}
inline long read(int fd, void* buffer, unsigned long size) {
  return call(SYS_read, fd, buffer, size);
}
inline long write(int fd, const void* buffer, unsigned long size) {
  return call(SYS_write, fd, buffer, size);
}
inline long execve(const char* program, char* const* argv, char* const* envp) {
  return call(SYS_execve, program, argv, envp);
}
[[noreturn]] inline void exit_group(int code) {
  for (;;) ::syscall(SYS_exit_group, code);
}

}  // namespace vime::sandbox::raw
