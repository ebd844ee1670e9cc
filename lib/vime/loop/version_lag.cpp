#include "vime/loop/version_lag.hpp"

#include <algorithm>
#include <charconv>

namespace vime::loop {

std::optional<int64_t> oldest_weight_version(const Sample& sample) {
  std::optional<int64_t> oldest;
  for (const auto& v : sample.weight_versions) {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size()) continue;
    oldest = oldest ? std::min(*oldest, n) : n;
  }
  // The fully async rollout tags the version a group started on (a request held across a weight
  // update answers with the newer one).
  if (const Json* start = sample.metadata.find("start_weight_version");
      start != nullptr && start->is_number()) {
    const auto n = start->as_int();
    oldest = oldest ? std::min(*oldest, n) : n;
  }
  return oldest;
}

VersionLags version_lags(const std::vector<Sample>& samples, int64_t rollout_id) {
  VersionLags out;
  int64_t count = 0, lo = 0, hi = 0;
  double sum = 0;
  for (const auto& s : samples) {
    const auto version = oldest_weight_version(s);
    if (!version) continue;
    const int64_t lag = rollout_id - *version;
    lo = count == 0 ? lag : std::min(lo, lag);
    hi = count == 0 ? lag : std::max(hi, lag);
    sum += static_cast<double>(lag);
    ++count;
  }
  if (count == 0) return out;
  out.metrics["rollout/async/version_lag_min"] = static_cast<double>(lo);
  out.metrics["rollout/async/version_lag_mean"] = sum / static_cast<double>(count);
  out.metrics["rollout/async/version_lag_max"] = static_cast<double>(hi);
  if (lo == hi) out.uniform = lo;
  return out;
}

}  // namespace vime::loop
