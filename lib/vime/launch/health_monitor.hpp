// Fault tolerance's watchdog (--use-fault-tolerance, --rollout-health-check-*): a thread that
// GETs /health on every engine each interval and reports the ones that fail (no answer within the
// timeout, or not 200) to a callback, which restarts and re-admits them.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vime/launch/health_check_options.hpp"

namespace vime::launch {

class HealthMonitor {
 public:
  // `urls` lists the engines to check now; `on_failed(url, why)` runs on the monitor thread, one
  // engine at a time; checks pause while it runs.
  HealthMonitor(HealthCheckOptions options, std::function<std::vector<std::string>()> urls,
                std::function<void(const std::string& url, const std::string& why)> on_failed);
  ~HealthMonitor();  // stops and joins
  HealthMonitor(const HealthMonitor&) = delete;
  HealthMonitor& operator=(const HealthMonitor&) = delete;

 private:
  void run();

  HealthCheckOptions options_;
  std::function<std::vector<std::string>()> urls_;
  std::function<void(const std::string&, const std::string&)> on_failed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vime::launch
