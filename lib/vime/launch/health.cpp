#include "vime/launch/health.hpp"

#include <thread>

#include "vime/error.hpp"
#include "vime/http/fetch.hpp"

namespace vime::launch {

bool is_healthy(const std::string& url, double timeout_s) {
  http::Request request = http::Request::get(url + "/health", timeout_s);
  request.connect_timeout_s = timeout_s;
  const http::Response response = http::fetch(request);
  return response.error.empty() && response.status == 200;
}

void wait_healthy(const std::vector<HealthTarget>& targets, const HealthWait& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_progress = start + options.progress_interval;
  std::vector<bool> healthy(targets.size(), false);
  size_t healthy_count = 0;
  while (true) {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (healthy[i]) continue;
      const HealthTarget& t = targets[i];
      // Health first: a server that answered and then exited is caught on the next round.
      if (is_healthy(t.url)) {
        healthy[i] = true;
        ++healthy_count;
        continue;
      }
      if (t.process != nullptr && !t.process->is_running()) {
        const std::string tail = t.process->log_tail(20);
        throw Error(t.name + " (" + t.url + ") " + t.process->describe_exit() +
                    " before it was healthy; its log is " + t.process->spec().log_path.string() +
                    (tail.empty() ? std::string(" (empty)") : ", last lines:\n" + tail));
      }
    }
    if (healthy_count == targets.size()) return;
    const auto now = Clock::now();
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
    if (now - start >= options.timeout) {
      std::string pending;
      for (size_t i = 0; i < targets.size(); ++i) {
        if (!healthy[i])
          pending += (pending.empty() ? "" : ", ") + targets[i].name + " (" + targets[i].url + ")";
      }
      std::string logs;
      for (size_t i = 0; i < targets.size(); ++i) {
        if (!healthy[i] && targets[i].process != nullptr)
          logs += (logs.empty() ? "" : ", ") + targets[i].process->spec().log_path.string();
      }
      throw Error(pending + " not healthy after " + std::to_string(waited) +
                  " s (GET /health); check " + (logs.empty() ? "the servers" : logs));
    }
    if (options.progress && now >= next_progress) {
      options.progress("waiting for " + std::to_string(targets.size()) + " " + options.what + ": " +
                       std::to_string(healthy_count) + "/" + std::to_string(targets.size()) +
                       " healthy, " + std::to_string(waited) + " s");
      next_progress = now + options.progress_interval;
    }
    std::this_thread::sleep_for(options.poll_interval);
  }
}

}  // namespace vime::launch
