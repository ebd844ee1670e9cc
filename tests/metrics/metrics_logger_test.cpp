// MetricsLogger with its console and JSONL sinks: what each log call leaves in the file, how the
// flags pick the file, appending across runs, concurrent loggers and bad paths.
#include "vime/metrics/metrics_logger.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/metrics/console_sink.hpp"
#include "vime/metrics/jsonl_sink.hpp"
#include "vime/metrics/metric_steps.hpp"

namespace fs = std::filesystem;
using vime::Json;
using vime::Metrics;
using vime::metrics::make_metrics_logger;

namespace {

vime::Args args(std::vector<std::string> flags) { return vime::core::parse_args(flags); }
vime::metrics::MetricsLoggerOptions logger_options(std::vector<std::string> flags) {
  return vime::metrics::MetricsLoggerOptions::from(args(std::move(flags)));
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

vime::metrics::WallClock counting_clock(double start_s) {
  auto now = std::make_shared<double>(start_s);
  return [now] { return (*now)++; };
}

}  // namespace

TEST_CASE("each log call is one JSON line with its step key", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path path = dir.path() / "run" / "metrics.jsonl";
  auto logger =
      make_metrics_logger(args({"--metrics-jsonl", path.string()}), nullptr, counting_clock(1000));
  logger->log(
      "rollout/step", 3,
      {{"rollout/response_len/mean", 12.5}, {"rollout/step", 3}, {"perf/rollout_time", 0.25}});
  logger->log("train/step", 7, {{"train/loss", -0.5}, {"train/pg_loss", std::nan("")}});
  logger->log("eval/step", 4, {});

  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 3);
  const Json rollout = Json::parse(lines[0], "line 1");
  CHECK(rollout.size() == 4);
  CHECK(rollout.at("rollout/step").is_int());  // an integer, as slime logs it
  CHECK(rollout.at("rollout/step").as_int() == 3);
  CHECK(rollout.at("rollout/response_len/mean").as_double() == 12.5);
  CHECK(rollout.at("perf/rollout_time").as_double() == 0.25);
  CHECK(rollout.at("_timestamp").as_double() == 1001);  // 1000 went to the logger's creation
  const Json train = Json::parse(lines[1], "line 2");
  CHECK(train.at("train/step").as_int() == 7);
  CHECK(std::isnan(train.at("train/pg_loss").as_double()));  // written as Python's json does: NaN
  CHECK(lines[1].find("NaN") != std::string::npos);
  CHECK(Json::parse(lines[2], "line 3").at("eval/step").as_int() == 4);
}

TEST_CASE("slime's log(metrics, step_key) takes the step from the metrics", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path path = dir.path() / "m.jsonl";
  auto logger = make_metrics_logger(args({"--metrics-jsonl", path.string()}), nullptr);
  logger->log({{"train/step", 12}, {"train/grad_norm", 2.0}}, "train/step");
  CHECK_THROWS_WITH(logger->log({{"train/grad_norm", 2.0}}, "train/step"),
                    Catch::Matchers::Contains("without their step key train/step"));
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 1);
  CHECK(Json::parse(lines[0]).at("train/step").as_int() == 12);
}

TEST_CASE("the JSONL file is --metrics-jsonl, else metrics.jsonl under --save", "[metrics_log]") {
  using vime::metrics::metrics_jsonl_path;
  CHECK_FALSE(metrics_jsonl_path(logger_options({})));
  CHECK(metrics_jsonl_path(logger_options({"--save", "/ckpt"})) == fs::path("/ckpt/metrics.jsonl"));
  CHECK(metrics_jsonl_path(logger_options({"--save", "/ckpt", "--metrics-jsonl", "/m.jsonl"})) ==
        fs::path("/m.jsonl"));

  vime::test::TempDir dir;
  std::ostringstream console;
  auto logger = make_metrics_logger(args({"--save", (dir.path() / "ckpt").string()}), &console);
  CHECK(logger->num_sinks() == 2);  // console + JSONL; no TensorBoard without the flags
  logger->log("rollout/step", 0, {{"rollout/raw_reward", 0.125}});
  CHECK(read_lines(dir.path() / "ckpt" / "metrics.jsonl").size() == 1);
  CHECK(console.str().find("Appending metrics to " +
                           (dir.path() / "ckpt" / "metrics.jsonl").string()) != std::string::npos);
  CHECK(console.str().find("rollout/step 0 | rollout/raw_reward 0.125\n") != std::string::npos);
}

TEST_CASE("a resumed run appends, and a line cut off by a crash stays apart", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path path = dir.path() / "metrics.jsonl";
  {
    vime::metrics::JsonlSink sink(path);
    sink.write("rollout/step", 0, {{"a", 1}}, 10);
  }
  {
    std::ofstream(path, std::ios::app) << R"({"rollout/step":1,"a")";  // killed mid-write
  }
  {
    vime::metrics::JsonlSink sink(path);
    sink.write("rollout/step", 1, {{"a", 2}}, 11);
  }
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 3);
  CHECK(Json::parse(lines[0]).at("a").as_double() == 1);
  CHECK(lines[1] == R"({"rollout/step":1,"a")");
  CHECK(Json::parse(lines[2]).at("a").as_double() == 2);
}

TEST_CASE("concurrent log calls each land as one whole line", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path path = dir.path() / "metrics.jsonl";
  std::ostringstream console;
  auto logger = make_metrics_logger(args({"--metrics-jsonl", path.string()}), &console);
  constexpr int kThreads = 8, kCalls = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        logger->log("rollout/step", i,
                    {{"worker", t}, {"x/" + std::string(100, 'a' + t), i * 0.5}});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::pair<int, int64_t>> seen;
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == kThreads * kCalls);
  for (const auto& line : lines) {
    const Json row = Json::parse(line, "metrics.jsonl");
    seen.emplace(static_cast<int>(row.at("worker").as_double()), row.at("rollout/step").as_int());
  }
  CHECK(seen.size() == kThreads * kCalls);
  CHECK(vime::test::count_lines(console.str()) == kThreads * kCalls + 1);  // + "Appending ..."
}

TEST_CASE("an unwritable metrics file is one error naming it", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path blocker = dir.write("file", "x");
  const auto under_file = args({"--metrics-jsonl", (blocker / "m.jsonl").string()});
  CHECK_THROWS_AS(make_metrics_logger(under_file, nullptr), vime::Error);
  CHECK_THROWS_WITH(make_metrics_logger(under_file, nullptr),
                    Catch::Matchers::Contains("cannot create directory " + blocker.string()));
  fs::create_directories(dir.path() / "is_a_dir.jsonl");
  CHECK_THROWS_AS(vime::metrics::JsonlSink(dir.path() / "is_a_dir.jsonl"), vime::Error);
  CHECK_THROWS_WITH(
      vime::metrics::JsonlSink(dir.path() / "is_a_dir.jsonl"),
      Catch::Matchers::Contains("cannot open " + (dir.path() / "is_a_dir.jsonl").string()));
}

TEST_CASE("the console sink prints one line per call", "[metrics_log]") {
  std::ostringstream out;
  vime::metrics::ConsoleSink sink(out);
  sink.write("train/step", 5, {{"train/loss", 0.123456789}, {"train/grad_norm", 1e-9}}, 0);
  CHECK(out.str() == "train/step 5 | train/grad_norm 1e-09 | train/loss 0.123457\n");

  std::ostringstream terminal;
  vime::metrics::ConsoleSink(terminal, /*is_tty=*/true)
      .write("eval/step", 0, {{"eval/aime", 0.5}}, 0);
  CHECK(terminal.str() == "\r\033[2Keval/step 0 | eval/aime 0.5\n");  // over a half-drawn bar
}

TEST_CASE("--log-interval thins the console, not the files", "[metrics_log]") {
  vime::test::TempDir dir;
  const auto jsonl = dir.path() / "m.jsonl";
  std::ostringstream console;
  auto logger = make_metrics_logger(
      args({"--log-interval", "3", "--metrics-jsonl", jsonl.string()}), &console);
  for (int64_t step = 0; step < 7; ++step) {
    logger->log("train/step", step, {{"train/loss", 1.0}});
    logger->log("rollout/step", step, {{"rollout/raw_reward", 0.5}});
  }
  logger->log("eval/step", 5, {{"eval/arith", 0.25}});
  std::string lines;
  std::istringstream in(console.str());
  for (std::string line; std::getline(in, line);)
    if (line.find("/step ") != std::string::npos) lines += line.substr(0, line.find(" |")) + ";";
  CHECK(lines ==
        "train/step 0;rollout/step 0;train/step 3;rollout/step 3;train/step 6;rollout/step 6;"
        "eval/step 5;");
  CHECK(read_lines(jsonl).size() == 15);
  CHECK_THROWS_WITH(make_metrics_logger(args({"--log-interval", "0"}), nullptr),
                    Catch::Matchers::Contains("--log-interval 0: must be at least 1"));
}

TEST_CASE("step keys take slime's x-axis values", "[metrics_log]") {
  using vime::metrics::compute_rollout_step;
  const auto base = std::vector<std::string>{
      "--rollout-batch-size", "32", "--n-samples-per-prompt", "8", "--global-batch-size", "64"};
  CHECK(compute_rollout_step(args(base), 5) == 5);
  auto train_axis = base;
  train_axis.push_back("--wandb-always-use-train-step");
  CHECK(compute_rollout_step(args(train_axis), 5) == 20);  // 5 * 32 * 8 // 64
  CHECK(compute_rollout_step(args({"--rollout-batch-size", "3", "--global-batch-size", "2",
                                   "--wandb-always-use-train-step"}),
                             3) == 4);  // floor(4.5)
  CHECK_THROWS_WITH(compute_rollout_step(args({"--wandb-always-use-train-step"}), 1),
                    Catch::Matchers::Contains("--rollout-batch-size"));
  CHECK(vime::metrics::compute_train_step(3, 4, 2) == 14);
}

TEST_CASE("processes appending to one JSONL file never split a line", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path path = dir.path() / "metrics.jsonl";
  constexpr int kProcesses = 3, kLines = 300;
  std::vector<pid_t> children;
  for (int worker = 0; worker < kProcesses; ++worker) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // each process opens the file itself, as separate runs or ranks would
      int status = 0;
      try {
        vime::metrics::JsonlSink sink(path);
        const std::string long_key = "x/" + std::string(8000, static_cast<char>('a' + worker));
        for (int i = 0; i < kLines; ++i) {
          sink.write("rollout/step", i, {{"worker", worker}, {long_key, i}}, 0);
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = -1;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == kProcesses * kLines);
  std::set<std::pair<int, int64_t>> seen;
  for (const auto& line : lines) {
    REQUIRE(line.size() > 8000);  // longer than a stdio buffer: each line is one write(2)
    const Json row = Json::parse(line, "metrics.jsonl");
    seen.emplace(static_cast<int>(row.at("worker").as_double()), row.at("rollout/step").as_int());
  }
  CHECK(seen.size() == kProcesses * kLines);
}
