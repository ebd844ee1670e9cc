// The embedded engine under tensor parallelism over real ranks: tp_engine_worker processes on Gloo
// groups over 127.0.0.1 (fp32, tiny Qwen3: 4 heads, 2 KV heads). TP 2 splits the KV heads, TP 4
// replicates each on two ranks, TP 2 x DP 2 runs two engines of two ranks. Each must generate what
// one rank does: the same greedy and seeded-sampled tokens, log-probs within fp32 rounding (the
// ranks sum partial products in another order: measured ~1e-7; compared at 1e-5), also after an
// in-place update of the shards between pause and resume, with rank 0 preempting in a small cache;
// also with decode-only steps through the fixed-shape decode runner on every rank.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/rank_processes.hpp"
#include "support/test_support.hpp"

namespace {
namespace fs = std::filesystem;

std::vector<fs::path> run_engine(const fs::path& dir, const std::string& tag, int world, int tp,
                                 bool fixed_shape_decode = false) {
  std::vector<std::string> args{"--tp", std::to_string(tp)};
  if (fixed_shape_decode) args.insert(args.end(), {"--fixed-shape-decode", "1"});
  return vime::test::run_ranks(VIME_TP_ENGINE_WORKER_BIN, dir, tag, world, args);
}

int64_t scalar(const fs::path& file, const std::string& name) {
  return vime::test::read_tensors(file).at(name).item<int64_t>();
}

}  // namespace

TEST_CASE("the engine at TP 2, TP 4 and TP 2 x DP 2 generates what one rank does",
          "[dist_tp_engine]") {
  vime::test::TempDir dir;
  const auto one = run_engine(dir.path(), "one", 1, 1)[0];
  auto reference = vime::test::read_tensors(one);
  CHECK(scalar(one, "preempted") > 0);
  // The update between the rounds reaches the engine: it reads the shards the trainer changed.
  CHECK(!reference.at("greedy.ids").equal(reference.at("updated.ids")));
  const auto tp2 = run_engine(dir.path(), "tp2", 2, 2);
  const auto tp4 = run_engine(dir.path(), "tp4", 4, 4);
  const auto tp2dp2 = run_engine(dir.path(), "tp2dp2", 4, 2);
  // Decode-only steps through the fixed-shape runner on every rank (the path CUDA graphs take).
  const auto tp2fixed = run_engine(dir.path(), "tp2fixed", 2, 2, true);
  const auto tp4fixed = run_engine(dir.path(), "tp4fixed", 4, 4, true);
  const std::vector<std::pair<const std::vector<fs::path>*, size_t>> runs{
      {&tp2, 2}, {&tp4, 4}, {&tp2dp2, 2}, {&tp2fixed, 2}, {&tp4fixed, 4}};
  for (const auto& [run, tp] : runs) {
    for (size_t r = 0; r < run->size(); ++r) {
      const auto& file = run->at(r);
      CAPTURE(file.filename().string());
      CHECK(scalar(file, "same_storage") == 1);  // the model's own tensors, never replaced
      // Every rank of the group ran each of its leader's forwards.
      const size_t leader = r - r % tp;
      CHECK(scalar(file, "forwards") == scalar(run->at(leader), "forwards"));
      if (r != leader) continue;
      auto mine = vime::test::read_tensors(file);
      for (const char* round : {"greedy", "updated", "sampled"}) {
        CAPTURE(round);
        const std::string r_ids = std::string(round) + ".ids";
        const std::string r_lp = std::string(round) + ".log_probs";
        CHECK(mine.at(r_ids).equal(reference.at(r_ids)));
        const double diff = (mine.at(r_lp) - reference.at(r_lp)).abs().max().item<double>();
        INFO("max |log-prob TP - 1| = " << diff);
        CHECK(diff < 1e-5);
      }
    }
  }
}
