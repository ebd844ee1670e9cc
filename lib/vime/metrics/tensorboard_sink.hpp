// Metrics as a TensorBoard event file, written without TensorFlow: TFRecord-framed Event protos,
// the first one carrying file_version "brain.Event:2", then one Event per log call with a
// simple_value per metric. Keys ending in "/step" are left out, as slime's TensorboardBackend does.
#pragma once

#include <filesystem>
#include <string>

#include "vime/metrics/append_file.hpp"
#include "vime/metrics/metrics_sink.hpp"

namespace vime::metrics {

// events.out.tfevents.<unix time, 10 digits>.<hostname>.<pid>: TensorBoard reads any file whose
// name holds "tfevents"; the pid keeps two writers started in one second apart (torch's
// SummaryWriter does the same).
std::string event_file_name(double wall_time_s);

class TensorBoardSink : public MetricsSink {
 public:
  // Creates `directory` and a new event file in it. Throws vime::Error naming the path.
  TensorBoardSink(const std::filesystem::path& directory, double wall_time_s);
  void write(std::string_view step_key, int64_t step, const Metrics& metrics,
             double wall_time_s) override;
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  AppendFile file_;
};

}  // namespace vime::metrics
