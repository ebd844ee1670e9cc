// TensorBoard event files checked two ways: byte for byte against a golden that Google's protobuf
// runtime serialized (goldens/make_tensorboard_golden.py), and through a decoder written here
// (TFRecord framing, CRC32C done bit by bit, the Event/Summary fields).
#include "vime/metrics/tensorboard_sink.hpp"

#include <unistd.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/tfrecord.hpp"

namespace fs = std::filesystem;
using vime::Json;
using vime::Metrics;

namespace {

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

const std::string kGoldenDir = VIME_SOURCE_DIR "/tests/metrics/goldens/";

// --- an independent reader --------------------------------------------------------------------

uint32_t bitwise_crc32c(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

uint32_t bitwise_masked(std::string_view data) {
  const uint32_t crc = bitwise_crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint64_t read_le(std::string_view bytes, size_t offset, int num_bytes) {
  uint64_t value = 0;
  for (int i = 0; i < num_bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

// Splits a TFRecord stream, checking both CRCs of every record.
std::vector<std::string> read_records(std::string_view file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    REQUIRE(file.size() - at >= 12);
    const uint64_t length = read_le(file, at, 8);
    CHECK(read_le(file, at + 8, 4) == bitwise_masked(file.substr(at, 8)));
    REQUIRE(file.size() - at - 12 >= length + 4);
    const std::string_view data = file.substr(at + 12, length);
    CHECK(read_le(file, at + 12 + length, 4) == bitwise_masked(data));
    records.emplace_back(data);
    at += 12 + length + 4;
  }
  return records;
}

struct ProtoReader {
  std::string_view bytes;
  size_t at = 0;
  bool done() const { return at >= bytes.size(); }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      REQUIRE(at < bytes.size());
      const auto byte = static_cast<unsigned char>(bytes[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
  }
  std::string_view take(size_t count) {
    REQUIRE(bytes.size() - at >= count);
    auto out = bytes.substr(at, count);
    at += count;
    return out;
  }
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::optional<std::string> file_version;
  std::vector<std::pair<std::string, float>> values;
};

DecodedEvent decode_event(std::string_view bytes) {
  DecodedEvent event;
  ProtoReader reader{bytes};
  while (!reader.done()) {
    const uint64_t key = reader.varint();
    switch (key) {
      case (1 << 3) | 1:
        event.wall_time = std::bit_cast<double>(read_le(reader.take(8), 0, 8));
        break;
      case (2 << 3) | 0:
        event.step = static_cast<int64_t>(reader.varint());
        break;
      case (3 << 3) | 2:
        event.file_version = std::string(reader.take(reader.varint()));
        break;
      case (5 << 3) | 2: {
        ProtoReader summary{reader.take(reader.varint())};
        while (!summary.done()) {
          REQUIRE(summary.varint() == ((1 << 3) | 2));
          ProtoReader value{summary.take(summary.varint())};
          std::string tag;
          std::optional<float> simple_value;
          while (!value.done()) {
            const uint64_t value_key = value.varint();
            if (value_key == ((1 << 3) | 2)) {
              tag = value.take(value.varint());
            } else {
              REQUIRE(value_key == ((2 << 3) | 5));
              simple_value =
                  std::bit_cast<float>(static_cast<uint32_t>(read_le(value.take(4), 0, 4)));
            }
          }
          REQUIRE(simple_value);
          event.values.emplace_back(tag, *simple_value);
        }
        break;
      }
      default:
        FAIL("unexpected Event field key " << key);
    }
  }
  return event;
}

// --- the scenario the golden was made from ----------------------------------------------------

Json scenario() {
  return Json::parse(read_bytes(kGoldenDir + "tensorboard_scenario.json"),
                     "tensorboard_scenario.json");
}

// Wall times in the order a logger asks for them: the file's creation, then one per log call.
vime::metrics::WallClock scripted_clock(const Json& s) {
  auto times = std::make_shared<std::vector<double>>();
  times->push_back(s.at("start_wall_time").as_double());
  for (const Json& log : s.at("logs").as_array()) times->push_back(log.at("wall_time").as_double());
  auto next = std::make_shared<size_t>(0);
  return [times, next] { return times->at((*next)++); };
}

Metrics metrics_of(const Json& object) {
  Metrics metrics;
  for (const auto& [name, value] : object.as_object()) metrics[name] = value.as_double();
  return metrics;
}

fs::path only_event_file(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  return files[0];
}

vime::Args args(std::vector<std::string> flags) { return vime::core::parse_args(flags); }
vime::metrics::MetricsLoggerOptions logger_options(std::vector<std::string> flags) {
  return vime::metrics::MetricsLoggerOptions::from(args(std::move(flags)));
}

}  // namespace

TEST_CASE("CRC32C matches the published check value and RFC 3720 vectors", "[metrics_log]") {
  using vime::metrics::crc32c;
  const std::string zeros(32, '\0'), ones(32, '\xff');
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c(zeros) == 0x8A9136AAu);
  CHECK(crc32c(ones) == 0x62A8AB43u);
  CHECK(crc32c(ascending) == 0x46DD794Eu);
  CHECK(crc32c(descending) == 0x113FDB5Cu);
  // The test's own bitwise CRC agrees, so the reader below checks framing independently.
  for (const std::string& s : {std::string("123456789"), zeros, ones, ascending, descending}) {
    CHECK(bitwise_crc32c(s) == crc32c(s));
    CHECK(bitwise_masked(s) == vime::metrics::masked_crc32c(s));
  }
  CHECK(vime::metrics::tfrecord("").size() == 16);
}

TEST_CASE("event files equal the protobuf-serialized golden byte for byte", "[metrics_log]") {
  vime::test::TempDir dir;
  const Json s = scenario();
  auto logger = vime::metrics::make_metrics_logger(
      args({"--tensorboard-dir", (dir.path() / "tb").string()}), nullptr, scripted_clock(s));
  REQUIRE(logger->num_sinks() == 1);
  for (const Json& log : s.at("logs").as_array()) {
    logger->log(log.at("step_key").as_string(), log.at("step").as_int(),
                metrics_of(log.at("metrics")));
  }
  const fs::path file = only_event_file(dir.path() / "tb");
  CHECK(file.filename().string().starts_with("events.out.tfevents.1700000000."));
  CHECK(read_bytes(file) == read_bytes(kGoldenDir + "tensorboard_golden.tfevents"));
}

TEST_CASE("event files decode to the logged scalars", "[metrics_log]") {
  vime::test::TempDir dir;
  const Json s = scenario();
  const auto& logs = s.at("logs").as_array();
  {
    auto logger = vime::metrics::make_metrics_logger(
        args({"--tensorboard-dir", dir.path().string()}), nullptr, scripted_clock(s));
    for (const Json& log : logs) {
      logger->log(log.at("step_key").as_string(), log.at("step").as_int(),
                  metrics_of(log.at("metrics")));
    }
  }
  const auto records = read_records(read_bytes(only_event_file(dir.path())));
  REQUIRE(records.size() == logs.size() + 1);

  const DecodedEvent first = decode_event(records[0]);
  CHECK(first.file_version == std::optional<std::string>("brain.Event:2"));
  CHECK(first.wall_time == s.at("start_wall_time").as_double());
  CHECK(first.values.empty());

  for (size_t i = 0; i < logs.size(); ++i) {
    INFO("log call " << i);
    const DecodedEvent event = decode_event(records[i + 1]);
    CHECK_FALSE(event.file_version);
    CHECK(event.wall_time == logs[i].at("wall_time").as_double());
    CHECK(event.step == logs[i].at("step").as_int());
    const auto& expected = logs[i].at("float32").as_object();  // "/step" keys already left out
    REQUIRE(event.values.size() == expected.size());
    size_t v = 0;
    for (const auto& [tag, value] : expected) {
      CHECK(event.values[v].first == tag);
      const double want = value.as_double();
      if (std::isnan(want)) {
        CHECK(std::isnan(event.values[v].second));
      } else {
        CHECK(static_cast<double>(event.values[v].second) == want);
      }
      ++v;
    }
  }
}

TEST_CASE("event file names follow TensorBoard's pattern", "[metrics_log]") {
  const std::string name = vime::metrics::event_file_name(1700000123.9);
  CHECK(name.starts_with("events.out.tfevents.1700000123."));
  const std::string pid_suffix = std::string(".").append(std::to_string(::getpid()));
  CHECK(name.ends_with(pid_suffix));
  CHECK(vime::metrics::event_file_name(5).starts_with("events.out.tfevents.0000000005."));
}

TEST_CASE(
    "the TensorBoard directory follows --tensorboard-dir, $TENSORBOARD_DIR, then slime's default",
    "[metrics_log]") {
  using vime::metrics::tensorboard_dir;
  CHECK_FALSE(tensorboard_dir(logger_options({}), "/env/tb"));  // off without --use-tensorboard
  CHECK(tensorboard_dir(logger_options({"--tensorboard-dir", "/flag/tb"}), "/env/tb") ==
        fs::path("/flag/tb"));
  CHECK(tensorboard_dir(logger_options({"--use-tensorboard", "--tb-project-name", "p",
                                        "--tb-experiment-name", "e"}),
                        "/env/tb") == fs::path("/env/tb"));
  CHECK(tensorboard_dir(logger_options({"--use-tensorboard", "--tb-project-name", "p",
                                        "--tb-experiment-name", "e"}),
                        nullptr) == fs::path("tensorboard_log/p/e"));
  CHECK(tensorboard_dir(logger_options({"--use-tensorboard", "--tb-project-name", "p",
                                        "--tb-experiment-name", "e"}),
                        "") == fs::path("tensorboard_log/p/e"));
  const auto no_dir = logger_options({"--use-tensorboard", "--tb-project-name", "p"});
  CHECK_THROWS_AS(tensorboard_dir(no_dir, nullptr), vime::UsageError);
  CHECK_THROWS_WITH(tensorboard_dir(no_dir, nullptr),
                    Catch::Matchers::Contains("--tb-experiment-name") &&
                        Catch::Matchers::Contains("--tensorboard-dir"));
}

TEST_CASE("a TensorBoard directory that cannot be created is one clear error", "[metrics_log]") {
  vime::test::TempDir dir;
  const fs::path blocker = dir.write("not_a_dir", "x");
  CHECK_THROWS_AS(vime::metrics::TensorBoardSink(blocker / "tb", 1.0), vime::Error);
  CHECK_THROWS_WITH(vime::metrics::TensorBoardSink(blocker / "tb", 1.0),
                    Catch::Matchers::Contains((blocker / "tb").string()));
}
