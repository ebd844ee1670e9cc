// metrics_bench: the cost of one MetricsLogger::log call per sink (TensorBoard event file, JSONL,
// both), against the I/O floor measured in the same run: write(2) of the same TensorBoard bytes,
// already encoded, to an O_APPEND file. Also the cost of ProgressBar::advance with 8 threads
// contending. Prints one JSON line per case.
//
//   build/bin/metrics_bench [--calls 20000] [--metrics 40] [--keep DIR]
// --keep DIR leaves the event file and metrics.jsonl there (e.g. for
// tests/metrics/goldens/make_tensorboard_golden.py --check).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "vime/core/arg_parser.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/progress_bar.hpp"
#include "vime/metrics/tensorboard_event.hpp"
#include "vime/metrics/tfrecord.hpp"

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

vime::Metrics train_metrics(int num_metrics, int64_t step) {
  vime::Metrics metrics;
  for (int i = 0; i < num_metrics; ++i) {
    metrics["train/metric_" + std::to_string(i)] = 0.001 * static_cast<double>(step * 7 + i);
  }
  return metrics;
}

double floor_seconds(const fs::path& path, int64_t calls, int num_metrics) {
  std::vector<std::string> records;
  for (int64_t step = 0; step < calls; ++step) {
    records.push_back(vime::metrics::tfrecord(
        vime::metrics::encode_scalars_event(1.7e9 + step, step, train_metrics(num_metrics, step))));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
  const auto start = Clock::now();
  for (const auto& record : records) {
    if (::write(fd, record.data(), record.size()) != static_cast<ssize_t>(record.size())) {
      std::perror("write");
      std::exit(1);
    }
  }
  const double seconds = seconds_since(start);
  ::close(fd);
  return seconds;
}

double logger_seconds(const std::vector<std::string>& flags, int64_t calls, int num_metrics) {
  auto logger = vime::metrics::make_metrics_logger(vime::core::parse_args(flags), nullptr);
  std::vector<vime::Metrics> all;
  for (int64_t step = 0; step < calls; ++step) all.push_back(train_metrics(num_metrics, step));
  const auto start = Clock::now();
  for (int64_t step = 0; step < calls; ++step) logger->log("train/step", step, all[step]);
  return seconds_since(start);
}

void report(const char* name, double seconds, int64_t calls, double floor_s) {
  std::printf(
      "{\"case\": \"%s\", \"calls\": %lld, \"us_per_call\": %.3f, \"ratio_vs_write_floor\": "
      "%.2f}\n",
      name, static_cast<long long>(calls), 1e6 * seconds / calls, seconds / floor_s);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t calls = 20000;
  int num_metrics = 40;
  std::string keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls")
      calls = std::stoll(argv[i + 1]);
    else if (flag == "--metrics")
      num_metrics = std::stoi(argv[i + 1]);
    else if (flag == "--keep")
      keep = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: metrics_bench [--calls N] [--metrics M] [--keep DIR]\n");
      return 2;
    }
  }
  const fs::path dir =
      keep.empty() ? fs::temp_directory_path() / ("metrics_bench_" + std::to_string(::getpid()))
                   : fs::path(keep);
  fs::create_directories(dir);

  const double floor_s = floor_seconds(dir / "floor.bin", calls, num_metrics);
  fs::remove(dir / "floor.bin");
  report("write_floor", floor_s, calls, floor_s);
  report("tensorboard",
         logger_seconds({"--tensorboard-dir", (dir / "tb").string()}, calls, num_metrics), calls,
         floor_s);
  report("jsonl",
         logger_seconds({"--metrics-jsonl", (dir / "metrics.jsonl").string()}, calls, num_metrics),
         calls, floor_s);
  fs::remove(dir / "metrics.jsonl");
  report("tensorboard+jsonl",
         logger_seconds({"--tensorboard-dir", (dir / "tb_both").string(), "--metrics-jsonl",
                         (dir / "metrics.jsonl").string()},
                        calls, num_metrics),
         calls, floor_s);

  // ProgressBar::advance, 8 rollout workers contending, plain mode (the clock is read per call).
  constexpr int kThreads = 8;
  const int64_t advances = calls * 10;
  std::ostringstream sink;
  vime::metrics::ProgressOptions options;
  options.label = "rollout 0";
  options.total = advances * kThreads;
  const auto start = Clock::now();
  {
    vime::metrics::ProgressBar bar(sink, options);
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back([&bar, advances] {
        for (int64_t i = 0; i < advances; ++i) bar.advance();
      });
    }
    for (auto& worker : workers) worker.join();
  }
  const double bar_s = seconds_since(start);
  std::printf(
      "{\"case\": \"progress_advance_8_threads\", \"advances\": %lld, \"ns_per_advance\": %.1f}\n",
      static_cast<long long>(advances * kThreads), 1e9 * bar_s / (advances * kThreads));
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
