// Shared by the launch tests: polling and process checks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>

namespace vime::launch::test {

// Polls `done` every 20 ms until it holds or `timeout` passes; returns its last value.
bool wait_until(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(5));
// The process exists and is no zombie (an orphan's zombie may wait for a busy init to reap it).
bool process_alive(pid_t pid);
std::string read_file(const std::string& path);

}  // namespace vime::launch::test
