// A progress line for long work (rollout generation, training steps). On a terminal it redraws one
// line in place ("\r" + erase-line); in logs (CI, files) it prints a plain line every
// `plain_interval_s` and a last one at the end, each with count, rate, elapsed time and ETA:
//   rollout 3: 12/64 samples (19%), 4.00 samples/s, elapsed 00:03, ETA 00:13
// advance() may be called from many threads (rollout workers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>

namespace vime::metrics {

using MonotonicClock = std::function<double()>;  // seconds from any fixed point
double steady_seconds();

struct ProgressOptions {
  std::string label;             // "rollout 3"
  std::string unit = "it";       // "samples", "steps"
  int64_t total = 0;             // 0 when unknown: no percentage, bar or ETA
  bool is_tty = false;           // redraw in place; else plain lines
  double plain_interval_s = 10;  // plain mode: at most one line this often, plus the last
  double tty_interval_s = 0.1;   // terminal: at most one redraw this often, plus the last
  // Plain mode: no last line for work that ended within plain_interval_s having printed none (a
  // training step of a small model: the metrics line after it says the same).
  bool plain_skip_quick = false;
  int bar_width = 30;
  // Terminal: the line never reaches this many columns (a wrapped line cannot be redrawn with
  // "\r"): the bar shrinks first, then the text is cut. 0: no limit.
  int max_columns = 0;
};

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, ProgressOptions options, MonotonicClock clock = steady_seconds);
  ~ProgressBar();  // finish()es
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(int64_t count = 1);
  // Prints the last line (with the total elapsed time and overall rate). Later calls do nothing.
  void finish();
  int64_t done() const;

 private:
  std::string status_text(double now_s, bool is_final) const;
  void print(double now_s, bool is_final);

  std::ostream& out_;
  const ProgressOptions options_;
  const MonotonicClock clock_;
  const double start_s_;
  mutable std::mutex mutex_;
  int64_t done_ = 0;
  double last_print_s_;
  bool finished_ = false;
};

// "05:07" under an hour, "1:02:03" from one hour on (tqdm's spelling).
std::string format_duration(double seconds);
// True when stdout is a terminal that understands ANSI (not TERM=dumb).
bool stdout_is_tty();
// A bar on std::cout, in the mode stdout_is_tty() picks, as wide as the terminal allows; in plain
// mode quiet for work that ends within its interval.
std::unique_ptr<ProgressBar> console_progress(std::string label, std::string unit, int64_t total);

}  // namespace vime::metrics
