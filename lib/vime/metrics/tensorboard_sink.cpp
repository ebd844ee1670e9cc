#include "vime/metrics/tensorboard_sink.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>

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
  Metrics scalars;
  for (const auto& [name, value] : metrics) {
    if (!name.ends_with("/step")) scalars.emplace(name, value);
  }
  if (scalars.empty()) return;
  file_.append(tfrecord(encode_scalars_event(wall_time_s, step, scalars)));
}

}  // namespace vime::metrics
