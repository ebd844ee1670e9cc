#include "vime/launch/health_monitor.hpp"

#include <chrono>

#include "vime/http/fetch.hpp"

namespace vime::launch {

HealthMonitor::HealthMonitor(
    HealthCheckOptions options, std::function<std::vector<std::string>()> urls,
    std::function<void(const std::string& url, const std::string& why)> on_failed)
    : options_(std::move(options)), urls_(std::move(urls)), on_failed_(std::move(on_failed)) {
  thread_ = std::thread([this] { run(); });
}

HealthMonitor::~HealthMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void HealthMonitor::run() {
  auto wait = [this](double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_; });
    return !stopping_;
  };
  if (!wait(options_.first_wait_s)) return;
  for (;;) {
    for (const auto& url : urls_()) {
      auto request = http::Request::get(url + "/health", options_.timeout_s);
      request.connect_timeout_s = options_.timeout_s;
      const auto response = http::fetch(request.bearer(options_.api_key));
      if (response.ok()) continue;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
      }
      on_failed_(url, response.describe());
    }
    if (!wait(options_.interval_s)) return;
  }
}

}  // namespace vime::launch
