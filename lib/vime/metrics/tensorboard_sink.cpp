#include "vime/metrics/tensorboard_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>

#include "vime/metrics/tensorboard_event.hpp"
#include "vime/metrics/tfrecord.hpp"

namespace vime::metrics {

namespace {

std::string host_name() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') return "localhost";
  return host.data();
}

}  // namespace

std::string event_file_name(double wall_time_s) {
  std::array<char, 32> seconds{};
  std::snprintf(seconds.data(), seconds.size(), "%010lld", static_cast<long long>(wall_time_s));
  return std::string("events.out.tfevents.") + seconds.data() + "." + host_name() + "." +
         std::to_string(::getpid());
}

TensorBoardSink::TensorBoardSink(const std::filesystem::path& directory, double wall_time_s)
    : file_(directory / event_file_name(wall_time_s), /*exclusive=*/true) {
  file_.append(tfrecord(encode_file_version_event(wall_time_s)));
}

void TensorBoardSink::write(std::string_view /*step_key*/, int64_t step, const Metrics& metrics,
                            double wall_time_s) {
  auto is_step_key = [](const auto& entry) { return entry.first.ends_with("/step"); };
  const Metrics* scalars = &metrics;
  Metrics without_steps;
  if (std::any_of(metrics.begin(), metrics.end(), is_step_key)) {
    std::remove_copy_if(metrics.begin(), metrics.end(),
                        std::inserter(without_steps, without_steps.end()), is_step_key);
    scalars = &without_steps;
  }
  if (scalars->empty()) return;
  file_.append(tfrecord(encode_scalars_event(wall_time_s, step, *scalars)));
}

}  // namespace vime::metrics
