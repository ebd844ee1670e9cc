#include "vime/metrics/console_sink.hpp"

#include <array>
#include <cstdio>
#include <string>

namespace vime::metrics {

void ConsoleSink::write(std::string_view step_key, int64_t step, const Metrics& metrics,
                        double /*wall_time_s*/) {
  if (log_interval_ > 1 && step_key != "eval/step" && step % log_interval_ != 0) return;
  std::string line = is_tty_ ? "\r\033[2K" : "";
  line.append(step_key).append(" ").append(std::to_string(step));
  std::array<char, 32> number{};
  for (const auto& [name, value] : metrics) {
    std::snprintf(number.data(), number.size(), "%.6g", value);
    line += " | " + name + " " + number.data();
  }
  line += "\n";
  out_ << line << std::flush;
}

}  // namespace vime::metrics
