// ProgressBar output with a fake clock: plain lines (CI logs) with rate and ETA, the terminal
// redraw, and concurrent updates.
#include "vime/metrics/progress_bar.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <thread>
#include <vector>

using vime::metrics::format_duration;
using vime::metrics::ProgressBar;
using vime::metrics::ProgressOptions;

namespace {

struct FakeClock {
  std::shared_ptr<double> now = std::make_shared<double>(100.0);
  vime::metrics::MonotonicClock clock() const {
    return [now = now] { return *now; };
  }
  void advance(double seconds) const { *now += seconds; }
};

ProgressOptions plain(int64_t total, double interval_s = 10) {
  ProgressOptions options;
  options.label = "rollout 3";
  options.unit = "samples";
  options.total = total;
  options.plain_interval_s = interval_s;
  return options;
}

}  // namespace

TEST_CASE("durations are spelled as tqdm does", "[metrics_log]") {
  CHECK(format_duration(0) == "00:00");
  CHECK(format_duration(5.4) == "00:05");
  CHECK(format_duration(59.6) == "01:00");
  CHECK(format_duration(3599) == "59:59");
  CHECK(format_duration(3723) == "1:02:03");
  CHECK(format_duration(-3) == "00:00");
}

TEST_CASE("plain progress prints rate and ETA at most once per interval", "[metrics_log]") {
  std::ostringstream out;
  FakeClock time;
  {
    ProgressBar bar(out, plain(64), time.clock());
    CHECK(out.str().empty());  // nothing before the first interval
    time.advance(3);
    bar.advance(12);  // 3 s in: too early for a line
    CHECK(out.str().empty());
    time.advance(7);
    bar.advance(8);  // 10 s, 20 done: 2.00/s, 44 left -> 22 s
    CHECK(out.str() ==
          "rollout 3: 20/64 samples (31%), 2.00 samples/s, elapsed 00:10, ETA 00:22\n");
    time.advance(5);
    bar.advance(20);  // 5 s after the last line: none
    time.advance(5);
    bar.advance(0);  // 20 s, 40 done: 2.00/s, ETA 12 s
    time.advance(12);
    bar.advance(24);  // 32 s, 64 done
  }                   // the destructor prints the final line
  CHECK(out.str() ==
        "rollout 3: 20/64 samples (31%), 2.00 samples/s, elapsed 00:10, ETA 00:22\n"
        "rollout 3: 40/64 samples (62%), 2.00 samples/s, elapsed 00:20, ETA 00:12\n"
        "rollout 3: 64/64 samples (100%), 2.00 samples/s, elapsed 00:32, ETA 00:00\n"
        "rollout 3: 64/64 samples (100%), 2.00 samples/s, elapsed 00:32\n");
}

TEST_CASE("progress without a total or a rate says so", "[metrics_log]") {
  std::ostringstream out;
  FakeClock time;
  ProgressBar bar(out, plain(0, 1), time.clock());
  time.advance(2);
  bar.advance(0);
  time.advance(2);
  bar.advance(3);
  bar.finish();
  bar.finish();    // once only
  bar.advance(5);  // ignored after finish
  CHECK(out.str() ==
        "rollout 3: 0 samples, ? samples/s, elapsed 00:02\n"
        "rollout 3: 3 samples, 0.75 samples/s, elapsed 00:04\n"
        "rollout 3: 3 samples, 0.75 samples/s, elapsed 00:04\n");
  CHECK(bar.done() == 3);
}

TEST_CASE("a quiet plain bar prints nothing for quick work, the last line for slow work",
          "[metrics_log]") {
  FakeClock time;
  auto options = plain(1);
  options.plain_skip_quick = true;
  std::ostringstream quick;
  {
    ProgressBar bar(quick, options, time.clock());
    time.advance(9);
    bar.advance();
  }
  CHECK(quick.str().empty());
  std::ostringstream slow;
  {
    ProgressBar bar(slow, options, time.clock());
    time.advance(5);
    bar.advance();
    time.advance(7);
  }
  CHECK(slow.str() == "rollout 3: 1/1 samples (100%), 0.08 samples/s, elapsed 00:12\n");
}

TEST_CASE("ETA is unknown until something is done", "[metrics_log]") {
  std::ostringstream out;
  FakeClock time;
  ProgressBar bar(out, plain(10, 1), time.clock());
  time.advance(1);
  bar.advance(0);
  CHECK(out.str() == "rollout 3: 0/10 samples (0%), ? samples/s, elapsed 00:01, ETA ?\n");
}

TEST_CASE("on a terminal the bar redraws one line in place", "[metrics_log]") {
  std::ostringstream out;
  FakeClock time;
  ProgressOptions options;
  options.label = "train";
  options.unit = "steps";
  options.total = 4;
  options.is_tty = true;
  options.bar_width = 8;
  {
    ProgressBar bar(out, options, time.clock());
    time.advance(0.05);
    bar.advance();  // within tty_interval_s of the first draw: no redraw
    time.advance(0.95);
    bar.advance();
  }
  CHECK(out.str() ==
        "\r\033[2Ktrain [        ] 0/4 steps (0%), ? steps/s, elapsed 00:00, ETA ?"
        "\r\033[2Ktrain [####    ] 2/4 steps (50%), 2.00 steps/s, elapsed 00:01, ETA 00:01"
        "\r\033[2Ktrain [####    ] 2/4 steps (50%), 2.00 steps/s, elapsed 00:01\n");
}

TEST_CASE("on a narrow terminal the bar shrinks, then the text is cut", "[metrics_log]") {
  FakeClock time;
  ProgressOptions options;
  options.label = "rollout 12";
  options.unit = "samples";
  options.total = 100;
  options.is_tty = true;
  options.bar_width = 30;
  auto first_draw = [&](int columns) {
    std::ostringstream out;
    options.max_columns = columns;
    ProgressBar bar(out, options, time.clock());
    std::string text = out.str();
    return text.substr(std::string("\r\033[2K").size());
  };
  const std::string status = "0/100 samples (0%), ? samples/s, elapsed 00:00, ETA ?";
  CHECK(first_draw(0) == "rollout 12 [" + std::string(30, ' ') + "] " + status);  // no limit
  CHECK(first_draw(200) == "rollout 12 [" + std::string(30, ' ') + "] " + status);
  // 80 columns: 79 usable - 10 label - 53 status - 4 for " [", "] " = 12 for the bar.
  CHECK(first_draw(80) == "rollout 12 [" + std::string(12, ' ') + "] " + status);
  CHECK(first_draw(80).size() == 79);
  CHECK(first_draw(73) == "rollout 12 [" + std::string(5, ' ') + "] " + status);
  CHECK(first_draw(72) == "rollout 12 " + status);  // a bar under 5 columns is left out
  CHECK(first_draw(40) == ("rollout 12 " + status).substr(0, 39));  // then the text is cut
}

TEST_CASE("many threads advance one bar without losing counts", "[metrics_log]") {
  std::ostringstream out;
  ProgressOptions options = plain(8 * 1000, 0);  // a line on every call: maximal contention
  {
    ProgressBar bar(out, options);
    std::vector<std::thread> workers;
    for (int t = 0; t < 8; ++t) {
      workers.emplace_back([&bar] {
        for (int i = 0; i < 1000; ++i) bar.advance();
      });
    }
    for (auto& worker : workers) worker.join();
    CHECK(bar.done() == 8000);
  }
  std::istringstream lines(out.str());
  int count = 0;
  std::string line, last;
  while (std::getline(lines, line)) {
    CHECK(line.starts_with("rollout 3: "));  // whole lines, never interleaved
    last = line;
    ++count;
  }
  CHECK(count == 8001);
  CHECK(last.starts_with("rollout 3: 8000/8000 samples (100%)"));
}
