// Context parallelism over real ranks: cp_worker processes (the real Actor and Critic, fp32, tiny
// Qwen3) on Gloo groups over 127.0.0.1, in Megatron's order tp-cp-dp. CP 2, CP 4, TP 2 x CP 2 and
// CP 2 x DP 2 equal one rank: the parameters after 4 AdamW steps, each step's loss and grad norm.
// The rollouts pack samples of 2 .. 29 tokens into one micro-batch (shorter than 2 x CP: padded
// chunks, ranks without a response row) with partial loss masks, per-sample and per-token
// normalisation, fixed and dynamic micro-batches, activation recompute (TP 2 x CP 2). The ranks sum
// attention and gradients in another order than one rank: measured differences ~1e-7; the tolerance
// is 1e-5, and 4 steps move the parameters by > 1e-3.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/rank_processes.hpp"
#include "support/test_support.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/model/model.hpp"

namespace {
namespace fs = std::filesystem;

constexpr double kTolerance = 1e-5;

fs::path run_cp(const fs::path& dir, const std::string& tag, int world, int tp, int cp,
                const std::string& loss, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(),
               {"--tp", std::to_string(tp), "--cp", std::to_string(cp), "--loss", loss});
  return vime::test::run_ranks(VIME_CP_WORKER_BIN, dir, tag, world, std::move(extra)).back();
}

// The largest absolute difference of the parameters, and of the per-step losses, grad norms and
// critic values (relative where they exceed 1).
struct Diff {
  double parameters = 0, steps = 0;
};
Diff diff(const fs::path& a, const fs::path& b, bool with_steps = true) {
  auto x = vime::test::read_tensors(a), y = vime::test::read_tensors(b);
  REQUIRE(x.size() == y.size());
  Diff d;
  for (const auto& [name, t] : x) {
    const bool is_step = name == "losses" || name == "grad_norms" || name == "values";
    if (is_step && !with_steps) continue;
    REQUIRE(y.count(name));
    REQUIRE(t.sizes() == y.at(name).sizes());
    if (is_step) {
      auto rel = (t - y.at(name)).abs() / y.at(name).abs().clamp_min(1.0);
      d.steps = std::max(d.steps, rel.max().item<double>());
    } else {
      d.parameters = std::max(d.parameters, (t - y.at(name)).abs().max().item<double>());
    }
  }
  return d;
}

void check_same(const fs::path& run, const fs::path& one) {
  const auto d = diff(run, one);
  INFO(run.filename().string() << ": parameters max |CP - 1| = " << d.parameters
                               << ", losses / grad norms = " << d.steps);
  CHECK(d.parameters < kTolerance);
  CHECK(d.steps < kTolerance);
}

const char* const kFixed = "--micro-batch-size 4";
const char* const kDynamicPerToken =
    "--calculate-per-token-loss --use-dynamic-batch-size --max-tokens-per-gpu 20";

}  // namespace

TEST_CASE("context parallel SFT and GRPO train as one rank (CP 2, CP 4, TP 2 x CP 2, CP 2 x DP 2)",
          "[dist_tp]") {
  vime::test::TempDir dir;
  for (const std::string loss : {"sft", "grpo"}) {
    CAPTURE(loss);
    const auto one = run_cp(dir.path(), loss + "_one", 1, 1, 1, loss, {"--flags", kFixed});
    const auto start =
        run_cp(dir.path(), loss + "_start", 1, 1, 1, loss, {"--flags", kFixed, "--rollouts", "0"});
    REQUIRE(diff(one, start, /*with_steps=*/false).parameters >
            1e-3);  // the steps move the parameters
    check_same(run_cp(dir.path(), loss + "_cp2", 2, 1, 2, loss, {"--flags", kFixed}), one);
    check_same(run_cp(dir.path(), loss + "_cp4", 4, 1, 4, loss, {"--flags", kFixed}), one);
    check_same(run_cp(dir.path(), loss + "_tp2cp2", 4, 2, 2, loss,
                      {"--flags", std::string(kFixed) + " --recompute-granularity full"}),
               one);
    // Per-token loss, dynamic micro-batches (a CP rank's share of --max-tokens-per-gpu), two
    // data-parallel ranks and the distributed optimizer sharded over data x context ranks.
    const auto one_dynamic =
        run_cp(dir.path(), loss + "_one_dyn", 1, 1, 1, loss, {"--flags", kDynamicPerToken});
    check_same(run_cp(dir.path(), loss + "_cp2dp2", 4, 1, 2, loss,
                      {"--flags", std::string(kDynamicPerToken) + " --use-distributed-optimizer"}),
               one_dynamic);
  }
}

TEST_CASE("context parallel PPO: the critic's values and training equal one rank", "[dist_tp]") {
  vime::test::TempDir dir;
  const auto one = run_cp(dir.path(), "one", 1, 1, 1, "grpo", {"--critic", "--flags", kFixed});
  check_same(run_cp(dir.path(), "cp2", 2, 1, 2, "grpo", {"--critic", "--flags", kFixed}), one);
}

TEST_CASE("checkpoints do not depend on the context-parallel size: saved at CP 2, resumed at 1, 4",
          "[dist_tp]") {
  vime::test::TempDir dir;
  const std::string saved = (dir.path() / "cp2").string();
  const auto straight =
      run_cp(dir.path(), "straight", 1, 1, 1, "sft", {"--flags", kFixed, "--rollouts", "3"});
  run_cp(dir.path(), "save", 2, 1, 2, "sft",
         {"--flags", kFixed, "--rollouts", "2", "--save", saved});
  for (int cp : {1, 4}) {
    CAPTURE(cp);
    const auto resumed = run_cp(dir.path(), "load" + std::to_string(cp), cp, 1, cp, "sft",
                                {"--flags", kFixed, "--rollouts", "1", "--load", saved});
    const double worst = diff(resumed, straight, /*with_steps=*/false).parameters;
    INFO("parameters max |resumed - straight| = " << worst);
    CHECK(worst < kTolerance);
  }
}

TEST_CASE("context-parallel groups: sizes that do not divide the ranks are refused", "[dist_tp]") {
  CHECK_THROWS_WITH(vime::dist::make_parallel_groups(nullptr, 1, 2),
                    Catch::Contains("--context-parallel-size 2") &&
                        Catch::Contains("does not divide the 1 trainer ranks"));
  auto alone = vime::dist::make_parallel_groups(nullptr, 1, 1);
  CHECK(alone.gradient() == nullptr);
  CHECK(alone.context_parallel() == nullptr);
}

TEST_CASE("a context-parallel shard: chunks r and 2N-1-r at their own positions, padded",
          "[dist_tp]") {
  // 10 tokens in 4 chunks of 3 (2 of padding), 3 tokens in 4 chunks of 1 (1 of padding).
  std::vector<int64_t> first{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, second{30, 31, 32};
  const auto full = vime::PackedBatch::pack({first, second}, at::kCPU);
  auto values = [](const at::Tensor& t) {
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  };
  vime::ContextParallel cp;
  cp.size = 2;
  cp.rank = 0;
  auto r0 = vime::shard_for_context_parallel(full, cp);
  CHECK(values(r0.tokens) == std::vector<int64_t>{10, 11, 12, 19, 0, 0, 30, 0});
  CHECK(values(r0.positions) == std::vector<int64_t>{0, 1, 2, 9, 10, 11, 0, 3});
  CHECK(r0.context_parallel->global_rows == std::vector<int64_t>{0, 1, 2, 9, -1, -1, 10, -1});
  // Each chunk sees its sample's keys up to its end: 3 and 12 keys, then 1 and 4.
  CHECK(r0.context_parallel->queries.cu_seqlens == std::vector<int64_t>{0, 3, 6, 7, 8});
  CHECK(r0.context_parallel->keys.cu_seqlens == std::vector<int64_t>{0, 3, 15, 16, 20});
  cp.rank = 1;
  auto r1 = vime::shard_for_context_parallel(full, cp);
  CHECK(values(r1.tokens) == std::vector<int64_t>{13, 14, 15, 16, 17, 18, 31, 32});
  CHECK(values(r1.positions) == std::vector<int64_t>{3, 4, 5, 6, 7, 8, 1, 2});
  // Rank 1's second chunk of the first sample (positions 6..8) sees positions 0..8: rank 0's rows
  // 0..2, then its own 0..5 (rows 8.. of the gathered [rank 0 | rank 1] K/V).
  auto keys = values(r1.context_parallel->key_rows);
  CHECK(std::vector<int64_t>(keys.begin() + 6, keys.begin() + 15) ==
        std::vector<int64_t>{0, 1, 2, 8, 9, 10, 11, 12, 13});
}
