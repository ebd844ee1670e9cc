// Waiting for launched servers (engines, vllm-router) to answer GET /health with 200.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "vime/launch/child_process.hpp"

namespace vime::launch {

struct HealthTarget {
  std::string name;                 // "engine 1"
  std::string url;                  // http://host:port
  ChildProcess* process = nullptr;  // nullptr: not ours (an external engine)
};

struct HealthWait {
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(500);
  std::chrono::milliseconds progress_interval = std::chrono::seconds(10);
  std::string what = "engines";  // in progress lines: "waiting for 2 engines: ..."
  std::function<void(const std::string&)> progress;  // nullptr: no progress lines
};

// One GET <url>/health; true on 200.
bool is_healthy(const std::string& url, double timeout_s = 5);

// Polls every target until all are healthy. Throws vime::Error at once when a process exits
// (with the tail of its log), and when `timeout` passes (naming the ones still not healthy).
void wait_healthy(const std::vector<HealthTarget>& targets, const HealthWait& options);

}  // namespace vime::launch
