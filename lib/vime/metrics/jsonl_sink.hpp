// Metrics as JSON Lines: one object per log call, {"rollout/step": 3, "_timestamp": 1.7e9,
// "rollout/response_len/mean": 12.5, ...}, appended with one write per line, so a crash loses at
// most the line being written and `tail -f` / pandas.read_json(lines=True) see each call at once.
// Non-finite values are written as Python's json does (NaN, Infinity).
#pragma once

#include <filesystem>

#include "vime/metrics/append_file.hpp"
#include "vime/metrics/metrics_sink.hpp"

namespace vime::metrics {

class JsonlSink : public MetricsSink {
 public:
  // Appends to `path` (a resumed run continues the same file). Throws vime::Error naming it.
  explicit JsonlSink(const std::filesystem::path& path);
  void write(std::string_view step_key, int64_t step, const Metrics& metrics,
             double wall_time_s) override;
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  AppendFile file_;
};

}  // namespace vime::metrics
