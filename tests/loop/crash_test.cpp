// Crash consistency of `vime train`: SIGKILL at 20 seeded random points of a GRPO run on
// the tiny task (a rollout sample, the optimizer step, the data-source save, each stage of a
// checkpoint write), aimed with VIME_TEST_CRASH_AT (vime/core/crash_point.hpp). After each kill the
// tracker names the last complete checkpoint, the restart with --load resumes right after it, and
// every checkpoint any run wrote equals, byte for byte, the one an uninterrupted run wrote for that
// iteration (parameters, optimizer state, RNG, data position). The untrained model earns no reward
// on the task, so --entropy-coef gives every step a gradient that depends on the sampled data.
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "loop/tiny_task.hpp"
#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

namespace fs = std::filesystem;
using vime::test::run_command;

namespace {

constexpr int64_t kNumRollout = 8;
constexpr int kKills = 20;
constexpr int kSamplesPerRollout = 16;  // tiny_grpo_flags: 4 prompts x 4 samples

std::string train_command(const fs::path& save, const std::string& crash_at, bool load) {
  std::string cmd;
  if (!crash_at.empty()) cmd += "VIME_TEST_CRASH_AT=" + crash_at + " ";
  cmd += std::string(VIME_BIN) + " train " + vime::test::tiny_grpo_flags("1e-3") +
         "--entropy-coef 0.01 --vllm-enable-deterministic-inference --num-rollout " +
         std::to_string(kNumRollout) + " --save " + save.string() + " --save-interval 1";
  if (load) cmd += " --load " + save.string();
  return cmd + "; echo \"exit=$?\"";  // the shell reports a SIGKILL as 137
}

std::optional<int64_t> tracker(const fs::path& save) {
  const auto path = save / "latest_checkpointed_iteration.txt";
  if (!fs::exists(path)) return std::nullopt;
  return std::stoll(vime::read_text_file(path));
}

std::string iter_name(int64_t i) {
  char name[32];
  std::snprintf(name, sizeof(name), "iter_%07lld", static_cast<long long>(i));
  return name;
}

// state.json without "args" (which name the run's own --load/--save).
vime::Json state_of(const fs::path& dir) {
  auto s = vime::Json::parse(vime::read_text_file(dir / "state.json"), "state.json");
  s.as_object().erase("args");
  return s;
}

// Checks that `got` holds the same files as the uninterrupted run's `want`, byte for byte.
void check_same_checkpoint(const fs::path& want, const fs::path& got) {
  INFO(got.string());
  REQUIRE(fs::exists(got / "state.json"));
  CHECK(state_of(got) == state_of(want));
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(want)) {
    if (!e.is_regular_file() || e.path().filename() == "state.json") continue;
    const auto rel = fs::relative(e.path(), want);
    INFO(rel.string());
    REQUIRE(fs::exists(got / rel));
    CHECK(vime::read_text_file(got / rel) == vime::read_text_file(e.path()));
    ++files;
  }
  CHECK(files >= 3);  // model tensors, config, optimizer state (and the RNG)
}

// Every published iteration directory of `save` and its data-source state match the reference.
void check_published(const fs::path& reference, const fs::path& save) {
  static const std::regex kIter("iter_\\d{7}");
  for (const auto& e : fs::directory_iterator(save)) {
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, kIter)) continue;
    check_same_checkpoint(reference / name, e.path());
  }
  if (!fs::exists(save / "rollout")) return;
  for (const auto& e : fs::directory_iterator(save / "rollout")) {
    if (e.path().extension() != ".json") continue;  // not the temp files a kill leaves
    INFO(e.path().string());
    CHECK(vime::read_text_file(e.path()) ==
          vime::read_text_file(reference / "rollout" / e.path().filename()));
  }
}

struct Kill {
  std::string point;
  int64_t hit;
  int64_t rollout;  // the rollout it lands in
};

}  // namespace

TEST_CASE("vime train: killed at 20 random points, each restart resumes exactly", "[crash]") {
  vime::test::TempDir dir;
  const fs::path reference = dir.path() / "reference", save = dir.path() / "crashed";
  auto ref = run_command(train_command(reference, "", false));
  INFO(ref.output);
  REQUIRE_THAT(ref.output, Catch::Contains("vime train: done") && Catch::Contains("exit=0"));
  REQUIRE(tracker(reference) == kNumRollout - 1);

  // Points passed once per rollout (rollout_sample: once per sample). ckpt_replacing is passed
  // only when a run re-saves an iteration a killed run had published without moving the tracker
  // (a kill at ckpt_renamed): it follows every such kill.
  const std::vector<std::string> points = {"rollout_sample", "train_step",     "data_saved",
                                           "ckpt_model",     "ckpt_optimizer", "ckpt_state",
                                           "ckpt_renamed"};
  std::mt19937 rng(22);
  std::string previous;
  for (int k = 0; k < kKills; ++k) {
    const auto last = tracker(save);
    const int64_t start = last ? *last + 1 : 0;
    Kill kill;
    if (previous == "ckpt_renamed") {
      kill = {"ckpt_replacing", 1, start};
    } else {
      kill.point = points[rng() % points.size()];
      const int64_t ahead = start + 1 < kNumRollout ? static_cast<int64_t>(rng() % 2) : 0;
      kill.rollout = start + ahead;
      kill.hit =
          kill.point == "rollout_sample"
              ? ahead * kSamplesPerRollout + 1 + static_cast<int64_t>(rng() % kSamplesPerRollout)
              : ahead + 1;
    }
    previous = kill.point;
    const std::string at = kill.point + ":" + std::to_string(kill.hit);
    INFO("kill " << k << " at " << at << " (rollout " << kill.rollout << ")");
    auto r = run_command(train_command(save, at, last.has_value()));
    INFO(r.output);
    REQUIRE_THAT(r.output, Catch::Contains("exit=137"));
    CHECK_THAT(r.output, Catch::Contains("rollouts " + std::to_string(start) + ".."));
    // Resumable from the last complete checkpoint: the one before the rollout the kill hit.
    const auto now = tracker(save);
    if (kill.rollout == 0) {
      CHECK_FALSE(now.has_value());
    } else {
      REQUIRE(now == kill.rollout - 1);
      check_same_checkpoint(reference / iter_name(*now), save / iter_name(*now));
    }
    check_published(reference, save);
  }
  auto done = run_command(train_command(save, "", tracker(save).has_value()));
  INFO(done.output);
  REQUIRE_THAT(done.output, Catch::Contains("vime train: done") && Catch::Contains("exit=0"));
  REQUIRE(tracker(save) == kNumRollout - 1);
  for (int64_t i = 0; i < kNumRollout; ++i) {
    check_same_checkpoint(reference / iter_name(i), save / iter_name(i));
  }
  check_published(reference, save);
  // Each iteration was saved again after any kill that left a temp dir or a replaced copy of it
  // behind; that save removed them.
  for (const auto& e : fs::directory_iterator(save)) {
    const std::string name = e.path().filename().string();
    CAPTURE(name);
    CHECK(name.find(".tmp.") == std::string::npos);
    CHECK(name.find(".old.") == std::string::npos);
  }
}
