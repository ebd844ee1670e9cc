#include "vime/metrics/progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace vime::metrics {
namespace {

std::string format_rate(double rate, const std::string& unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %s/s", rate, unit.c_str());
  return text;
}

// The terminal's width, else $COLUMNS, else 80.
int terminal_columns() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    if (const int value = std::atoi(columns); value > 0) return value;
  }
  return 80;
}

}  // namespace

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  const int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  char text[48];
  if (hours > 0) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(secs));
  } else {
    std::snprintf(text, sizeof text, "%02lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  }
  return text;
}

bool stdout_is_tty() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

std::unique_ptr<ProgressBar> console_progress(std::string label, std::string unit, int64_t total) {
  ProgressOptions options;
  options.label = std::move(label);
  options.unit = std::move(unit);
  options.total = total;
  options.is_tty = stdout_is_tty();
  options.max_columns = terminal_columns();
  options.plain_skip_quick = true;
  return std::make_unique<ProgressBar>(std::cout, std::move(options));
}

ProgressBar::ProgressBar(std::ostream& out, ProgressOptions options, MonotonicClock clock)
    : out_(out),
      options_(std::move(options)),
      clock_(std::move(clock)),
      start_s_(clock_()),
      last_print_s_(start_s_) {
  if (options_.is_tty) print(start_s_, /*is_final=*/false);  // show the bar before the first step
}

ProgressBar::~ProgressBar() {
  try {
    finish();
  } catch (...) {  // a closed stream must not turn into std::terminate
  }
}

void ProgressBar::advance(int64_t count) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  done_ += count;
  const double now_s = clock_();
  const double interval_s = options_.is_tty ? options_.tty_interval_s : options_.plain_interval_s;
  if (now_s - last_print_s_ >= interval_s) print(now_s, /*is_final=*/false);
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  const double now_s = clock_();
  if (!options_.is_tty && options_.plain_skip_quick && last_print_s_ == start_s_ &&
      now_s - start_s_ < options_.plain_interval_s)
    return;
  print(now_s, /*is_final=*/true);
}

int64_t ProgressBar::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

std::string ProgressBar::status_text(double now_s, bool is_final) const {
  const double elapsed_s = now_s - start_s_;
  const bool has_rate = elapsed_s > 0 && done_ > 0;
  const double rate = has_rate ? done_ / elapsed_s : 0.0;
  std::string text = std::to_string(done_);
  if (options_.total > 0) text.append("/").append(std::to_string(options_.total));
  text.append(" ").append(options_.unit);
  if (options_.total > 0) {
    text.append(" (").append(std::to_string(done_ * 100 / options_.total)).append("%)");
  }
  text.append(", ").append(has_rate ? format_rate(rate, options_.unit)
                                    : "? " + options_.unit + "/s");
  text.append(", elapsed ").append(format_duration(elapsed_s));
  if (!is_final && options_.total > 0) {
    const int64_t left = std::max<int64_t>(0, options_.total - done_);
    text.append(", ETA ").append(has_rate ? format_duration(left / rate) : std::string("?"));
  }
  return text;
}

void ProgressBar::print(double now_s, bool is_final) {
  last_print_s_ = now_s;
  std::string line;
  if (options_.is_tty) {
    const std::string status = status_text(now_s, is_final);
    int64_t width = options_.total > 0 ? options_.bar_width : 0;
    if (options_.max_columns > 0) {  // "label [bar] status" must stay below max_columns
      const auto room = static_cast<int64_t>(options_.max_columns) - 1 -
                        static_cast<int64_t>(options_.label.size() + status.size()) - 4;
      width = std::clamp<int64_t>(room, 0, width);
      if (width < 5) width = 0;  // a bar too short to read is left out
    }
    std::string text = options_.label;
    if (width > 0) {
      const int64_t filled = std::clamp<int64_t>(done_ * width / options_.total, 0, width);
      text.append(" [").append(filled, '#').append(width - filled, ' ').append("]");
    }
    text.append(" ").append(status);
    if (options_.max_columns > 0 && text.size() >= static_cast<size_t>(options_.max_columns)) {
      text.resize(options_.max_columns - 1);
    }
    line.append("\r\033[2K").append(text);
    if (is_final) line.append("\n");
  } else {
    line.append(options_.label).append(": ").append(status_text(now_s, is_final)).append("\n");
  }
  out_ << line << std::flush;
}

}  // namespace vime::metrics
