// The process groups of vime's live child processes (engines, router), and the handlers that kill
// them on every way out of vime: normal exit and std::exit (atexit), uncaught exceptions
// (std::terminate), SIGINT/SIGTERM/SIGHUP (kill, then the signal's previous action) and fatal
// signals (SIGSEGV/SIGABRT/SIGBUS/SIGFPE/SIGILL: SIGKILL at once, async-signal-safe calls only).
// A `kill -9` of vime cannot be caught: the children's parent-death signal covers it.
#pragma once

#include <sys/types.h>

namespace vime::launch {

// Adds a process group (its leader's pid); installs the handlers on first use. Throws vime::Error
// when more groups are live than the registry holds.
void register_child_group(pid_t pgid);
void unregister_child_group(pid_t pgid);

// SIGTERM to every registered group, up to `grace_ms` for them to go, then SIGKILL; empties the
// registry. Async-signal-safe (kill, waitpid, nanosleep only).
void kill_registered_children(int grace_ms);

// Idempotent; register_child_group calls it.
void install_cleanup_handlers();

}  // namespace vime::launch
