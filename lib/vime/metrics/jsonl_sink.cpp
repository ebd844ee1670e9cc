#include "vime/metrics/jsonl_sink.hpp"

#include "vime/json.hpp"

namespace vime::metrics {

JsonlSink::JsonlSink(const std::filesystem::path& path) : file_(path) {}

void JsonlSink::write(std::string_view step_key, int64_t step, const Metrics& metrics,
                      double wall_time_s) {
  Json line = Json::object();
  for (const auto& [name, value] : metrics) line[name] = value;
  line[step_key] = step;
  line["_timestamp"] = wall_time_s;  // W&B's name for the wall time of a row
  // on_new_line: a writer killed mid-line must not glue its fragment to this line.
  file_.append(line.dump() + "\n", /*on_new_line=*/true);
}

}  // namespace vime::metrics
