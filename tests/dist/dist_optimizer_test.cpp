// Data-parallel training over real ranks: optimizer_worker processes on a Gloo group over
// 127.0.0.1 (fp32, tiny Qwen3, 6 samples per global batch). Tolerance: N ranks sum the same
// per-sample gradients in another order (each rank's share, then the all-reduce), ~1e-7 relative
// per element; Adam's update is scale-free (m / sqrt(v)), so a parameter moves by lr x (that
// relative error) per step, and 3-4 steps at lr 1e-3 stay far below 1e-5 absolute. The
// distributed optimizer reduces exactly as the plain one here (Gloo's reduce-scatter is an
// all-reduce), so without clipping it must match bit for bit.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "support/rank_processes.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/train/optimizer.hpp"

namespace {
namespace fs = std::filesystem;

const std::string kTinyQwen3 = VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3";

std::vector<fs::path> run_ranks(const fs::path& dir, const std::string& tag, int world,
                                std::vector<std::string> extra) {
  return vime::test::run_ranks(VIME_OPTIMIZER_WORKER_BIN, dir, tag, world, std::move(extra));
}

std::map<std::string, at::Tensor> read_result(const fs::path& path) {
  return vime::test::read_tensors(path);
}

// The largest absolute difference over the parameters (grad_norms left out).
double max_param_diff(const fs::path& a, const fs::path& b) {
  auto x = read_result(a), y = read_result(b);
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (const auto& [name, t] : x) {
    if (name == "grad_norms") continue;
    REQUIRE(y.count(name));
    worst = std::max(worst, (t - y.at(name)).abs().max().item<double>());
  }
  return worst;
}

bool params_equal(const fs::path& a, const fs::path& b) {
  auto x = read_result(a), y = read_result(b);
  for (const auto& [name, t] : x)
    if (name != "grad_norms" && !t.equal(y.at(name))) return false;
  return true;
}

constexpr double kTolerance = 1e-5;

}  // namespace

TEST_CASE("2 and 3 ranks train as 1 rank with the same global batch; ZeRO-1 = plain DP",
          "[dist_optim]") {
  vime::test::TempDir dir;
  const auto one = run_ranks(dir.path(), "one", 1, {"--steps", "3", "--clip", "100"})[0];
  const auto start = run_ranks(dir.path(), "start", 1, {"--steps", "0"})[0];
  // Three steps of lr 1e-3 move the parameters far more than the tolerance.
  REQUIRE(max_param_diff(one, start) > 1e-3);
  for (int world : {2, 3}) {
    CAPTURE(world);
    const auto plain = run_ranks(dir.path(), "plain" + std::to_string(world), world,
                                 {"--steps", "3", "--clip", "100"});
    const auto zero = run_ranks(dir.path(), "zero" + std::to_string(world), world,
                                {"--steps", "3", "--clip", "100", "--distributed"});
    for (int r = 1; r < world; ++r) {  // every rank ends with the same model
      CHECK(params_equal(plain[0], plain[r]));
      CHECK(params_equal(zero[0], zero[r]));
    }
    CHECK(params_equal(plain[0], zero[0]));
    const double diff = max_param_diff(one, zero[0]);
    INFO("max |p_N - p_1| = " << diff);
    CHECK(diff < kTolerance);
  }
}

TEST_CASE("clipping uses the global grad norm over all ranks' shards", "[dist_optim]") {
  vime::test::TempDir dir;
  // clip 0.05 is below every step's norm here: every update is scaled by the global norm.
  const auto one = run_ranks(dir.path(), "one", 1, {"--steps", "3", "--clip", "0.05"})[0];
  const auto zero =
      run_ranks(dir.path(), "zero", 3, {"--steps", "3", "--clip", "0.05", "--distributed"});
  auto a = read_result(one).at("grad_norms"), b = read_result(zero[2]).at("grad_norms");
  REQUIRE(a.numel() == 3);
  CHECK(a.min().item<double>() > 0.05);
  CHECK(at::allclose(a, b, 1e-5, 0));
  CHECK(max_param_diff(one, zero[0]) < kTolerance);
}

TEST_CASE("--offload-train's round trip leaves the training unchanged", "[dist_optim]") {
  vime::test::TempDir dir;
  const auto plain = run_ranks(dir.path(), "zero", 2, {"--steps", "2", "--distributed"});
  const auto offload =
      run_ranks(dir.path(), "offload", 2, {"--steps", "2", "--distributed", "--offload"});
  CHECK(params_equal(plain[0], offload[0]));
}

TEST_CASE("a checkpoint of the distributed optimizer resumes at another data-parallel size",
          "[dist_optim]") {
  vime::test::TempDir dir;
  const auto straight = run_ranks(dir.path(), "straight", 1, {"--steps", "4"})[0];
  const std::string at2 = (dir.path() / "at2").string(), at1 = (dir.path() / "at1").string(),
                    at3 = (dir.path() / "at3").string();
  SECTION("2 ranks -> 1 rank") {
    run_ranks(dir.path(), "save2", 2, {"--steps", "2", "--distributed", "--save", at2});
    CHECK(
        fs::exists(fs::path(at2) / "iter_0000002" / "optimizer" / "rank_0001_of_0002.safetensors"));
    const auto resumed = run_ranks(dir.path(), "load1", 1, {"--steps", "2", "--load", at2})[0];
    CHECK(max_param_diff(straight, resumed) < kTolerance);
  }
  SECTION("1 rank -> 2 ranks") {
    run_ranks(dir.path(), "save1", 1, {"--steps", "2", "--save", at1});
    CHECK(fs::exists(fs::path(at1) / "iter_0000002" / "optimizer_rank_00000.safetensors"));
    const auto resumed =
        run_ranks(dir.path(), "load2", 2, {"--steps", "2", "--distributed", "--load", at1});
    CHECK(max_param_diff(straight, resumed[1]) < kTolerance);
  }
  SECTION("3 ranks -> 2 ranks, both sharded") {
    run_ranks(dir.path(), "save3", 3, {"--steps", "2", "--distributed", "--save", at3});
    const auto resumed =
        run_ranks(dir.path(), "load2", 2, {"--steps", "2", "--distributed", "--load", at3});
    CHECK(max_param_diff(straight, resumed[0]) < kTolerance);
  }
}

TEST_CASE("a truncated optimizer shard is one clear error naming the file", "[dist_optim]") {
  vime::test::TempDir dir;
  const std::string at2 = (dir.path() / "at2").string();
  run_ranks(dir.path(), "save2", 2, {"--steps", "1", "--distributed", "--save", at2});
  const fs::path shard =
      fs::path(at2) / "iter_0000001" / "optimizer" / "rank_0001_of_0002.safetensors";
  REQUIRE(fs::exists(shard));
  fs::resize_file(shard, fs::file_size(shard) / 2);
  auto model = std::make_unique<vime::Model>(vime::ModelConfig::from_hf_dir(kTinyQwen3), at::kFloat,
                                             at::kCPU, 1234);
  vime::Optimizer optimizer(model->named_parameters(), {});
  auto resolved = vime::ckpt::resolve_checkpoint(at2);
  REQUIRE(resolved.has_value());
  CHECK_THROWS_WITH(vime::ckpt::load_checkpoint(*resolved, *model, &optimizer, false),
                    Catch::Contains(shard.string()) && Catch::Contains("truncated"));
  fs::remove(shard);
  CHECK_THROWS_WITH(vime::ckpt::load_checkpoint(*resolved, *model, &optimizer, false),
                    Catch::Contains(shard.string()) && Catch::Contains("missing"));
}

TEST_CASE("offload() frees the optimizer's memory and reload() restores it exactly",
          "[dist_optim]") {
  auto w = at::randn({64, 8});
  auto b = at::randn({8}).to(at::kBFloat16);  // a low-precision parameter: it has a master
  vime::OptimizerConfig config;
  config.bucket_elements = 100;  // several buckets
  vime::Optimizer optimizer({{"w", w}, {"b.bias", b}}, config);
  w.mutable_grad() = at::randn({64, 8});
  b.mutable_grad() = at::randn({8}).to(at::kBFloat16);
  optimizer.accumulate_grads();
  optimizer.step(1e-2);
  w.mutable_grad() = at::randn({64, 8});
  optimizer.accumulate_grads();  // main grads in flight, as between micro-batches
  std::vector<at::Tensor> before;
  for (const auto& [name, t] : optimizer.state_tensors()) before.push_back(t.clone());
  const auto grad_before = optimizer.main_grads()[0].clone();

  optimizer.offload();
  CHECK(optimizer.is_offloaded());
  CHECK(optimizer.main_grads()[0].storage().nbytes() == 0);  // really freed
  CHECK_THROWS_WITH(optimizer.step(1e-2), Catch::Contains("reload()"));
  optimizer.reload();
  CHECK_FALSE(optimizer.is_offloaded());
  const auto after = optimizer.state_tensors();
  REQUIRE(after.size() == before.size());
  REQUIRE(after.size() == 5);  // exp_avg, exp_avg_sq of both, master of b
  for (size_t i = 0; i < after.size(); ++i) {
    CAPTURE(after[i].first);
    CHECK(after[i].second.equal(before[i]));
  }
  CHECK(optimizer.main_grads()[0].equal(grad_before));
  CHECK(optimizer.step(1e-2).is_updated);
}
