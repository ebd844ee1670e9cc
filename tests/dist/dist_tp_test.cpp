// Tensor x data parallelism over real ranks: tp_worker processes on Gloo groups over 127.0.0.1
// (fp32, tiny Qwen3: 4 heads, 2 KV heads, tied embeddings; tiny Qwen2: qkv bias, untied). TP 2
// splits every head group; TP 4 holds one head per rank and replicates each KV head on two ranks.
// Tolerance: the ranks sum partial products in another order (row-parallel outputs, vocabulary
// sums), ~1e-7 relative in fp32 (measured: logits and gradients 1.3e-7, log-probs 1e-6, entropy
// 1.4e-6 at values ~4, parameters after 3 steps 4e-8; the worker's Adam eps keeps rounding in
// near-zero gradients from deciding whole steps). Logits, gradients and parameters are compared
// at 1e-6, log-probs and entropy at 1e-5 (absolute); 3 steps move the parameters by > 1e-3, a
// wrong shard or a missing reduction by far more than that.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/rank_processes.hpp"
#include "support/test_support.hpp"
#include "vime/dist/parallel_groups.hpp"
#include "vime/model/model_config.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace {
namespace fs = std::filesystem;

constexpr double kTight = 1e-6;      // logits, gradients, parameters
constexpr double kTolerance = 1e-5;  // log-probs and entropy (log-sum-exp over the vocabulary)

std::vector<fs::path> run_tp(const fs::path& dir, const std::string& tag, int world, int tp,
                             std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--tp", std::to_string(tp)});
  return vime::test::run_ranks(VIME_TP_WORKER_BIN, dir, tag, world, std::move(extra));
}

// The largest absolute difference over the tensors whose name starts with `prefix` ("" : all but
// the grad norms); both files must hold the same names.
double max_diff(const fs::path& a, const fs::path& b, const std::string& prefix = "") {
  auto x = vime::test::read_tensors(a), y = vime::test::read_tensors(b);
  REQUIRE(x.size() == y.size());
  double worst = 0;
  int compared = 0;
  for (const auto& [name, t] : x) {
    if (name.rfind(prefix, 0) != 0 || name == "grad_norms" || name == "recomputed_layers") continue;
    if (prefix.empty() && (name.rfind("grad.", 0) == 0 || name == "logits" || name == "log_probs" ||
                           name == "entropy"))
      continue;  // "": the parameters only
    REQUIRE(y.count(name));
    REQUIRE(t.sizes() == y.at(name).sizes());
    worst = std::max(worst, (t - y.at(name)).abs().max().item<double>());
    ++compared;
  }
  REQUIRE(compared > 0);
  return worst;
}

bool same_parameters(const fs::path& a, const fs::path& b) {
  auto x = vime::test::read_tensors(a), y = vime::test::read_tensors(b);
  for (const auto& [name, t] : x)
    if (name != "grad_norms" && name != "recomputed_layers" && !t.equal(y.at(name))) return false;
  return true;
}

// One rank's output against the single-rank run: forward, backward and 3 optimizer steps.
void check_equals_one_rank(const fs::path& mine, const fs::path& one) {
  for (const char* what : {"logits", "log_probs", "entropy", "grad."}) {
    const double diff = max_diff(mine, one, what);
    INFO(what << ": max |TP - 1| = " << diff);
    CHECK(diff <
          (std::string(what) == "logits" || std::string(what) == "grad." ? kTight : kTolerance));
  }
  const double params = max_diff(mine, one);
  INFO("parameters after 3 steps: max |TP - 1| = " << params);
  CHECK(params < kTight);
  auto a = vime::test::read_tensors(mine).at("grad_norms"),
       b = vime::test::read_tensors(one).at("grad_norms");
  CHECK(at::allclose(a, b, 1e-5, 0));
}

}  // namespace

TEST_CASE("TP 2, TP 4 (replicated KV heads) and TP 2 x DP 2 train as one rank", "[dist_tp]") {
  vime::test::TempDir dir;
  for (const char* model : {"tiny_qwen3", "tiny_qwen2"}) {
    CAPTURE(model);
    const std::string config = std::string(VIME_SOURCE_DIR "/tests/model/golden/") + model;
    const std::string m(model);
    const auto one = run_tp(dir.path(), m + "_one", 1, 1, {"--config", config})[0];
    const auto start = run_tp(dir.path(), m + "_start", 1, 1, {"--config", config, "--steps", "0"});
    REQUIRE(max_diff(one, start[0]) > 1e-3);  // the steps move the parameters far past tolerance
    const auto tp2 = run_tp(dir.path(), m + "_tp2", 2, 2, {"--config", config});
    const auto tp4 = run_tp(dir.path(), m + "_tp4", 4, 4, {"--config", config});
    const auto tp2dp2 =
        run_tp(dir.path(), m + "_tp2dp2", 4, 2, {"--config", config, "--distributed"});
    for (const auto* run : {&tp2, &tp4, &tp2dp2}) {
      for (size_t r = 0; r < run->size(); ++r) {
        CAPTURE(run->at(r).filename().string());
        check_equals_one_rank(run->at(r), one);
        CHECK(same_parameters(run->at(0), run->at(r)));  // every rank gathers the same model
      }
    }
  }
}

// MoE layers split every expert's FFN width (and the shared experts') over the ranks; the router's
// and the shared expert's gate's gradients are summed over them. GLM-4's extra norms and GLM-4.5's
// fixed router bias are replicated.
TEST_CASE("TP 2 trains the tiny Qwen3-MoE, Qwen2-MoE, GLM-4 and GLM-4.5 as one rank", "[dist_tp]") {
  vime::test::TempDir dir;
  for (const char* model : {"tiny_qwen3_moe", "tiny_qwen2_moe", "tiny_glm4", "tiny_glm4_moe"}) {
    CAPTURE(model);
    const std::string config = std::string(VIME_SOURCE_DIR "/tests/model/golden/") + model;
    const std::string m(model);
    const auto one = run_tp(dir.path(), m + "_one", 1, 1, {"--config", config})[0];
    const auto tp2 = run_tp(dir.path(), m + "_tp2", 2, 2, {"--config", config});
    for (size_t r = 0; r < tp2.size(); ++r) {
      CAPTURE(r);
      check_equals_one_rank(tp2[r], one);
    }
  }
}

TEST_CASE("TP 2 with activation recompute and plain data parallelism trains as one rank",
          "[dist_tp]") {
  vime::test::TempDir dir;
  const auto one = run_tp(dir.path(), "one", 1, 1)[0];
  const auto recompute = run_tp(dir.path(), "recompute", 2, 2, {"--recompute"});
  check_equals_one_rank(recompute[1], one);
  // Recompute ran: each rank's backward ran both layers of tiny Qwen3 again (the same gradients
  // without it would pass the check above too).
  for (const auto& rank : recompute)
    CHECK(vime::test::read_tensors(rank).at("recomputed_layers").item<int64_t>() == 2);
  CHECK(vime::test::read_tensors(one).at("recomputed_layers").item<int64_t>() == 0);
  const auto plain = run_tp(dir.path(), "tp2dp2", 4, 2);
  check_equals_one_rank(plain[3], one);
}

// LoRA: A whole and B split by rows on column-parallel linears, A split by columns and B whole on
// row-parallel ones; the whole factor's gradient summed over the group. Base weights stay fixed.
TEST_CASE("LoRA adapters under TP 2 and TP 4 (replicated KV heads) train as on one rank",
          "[dist_tp]") {
  vime::test::TempDir dir;
  const std::string config = VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen2";
  const auto one = run_tp(dir.path(), "one", 1, 1, {"--config", config, "--lora"})[0];
  const auto start =
      run_tp(dir.path(), "start", 1, 1, {"--config", config, "--lora", "--steps", "0"})[0];
  REQUIRE(max_diff(one, start, "model.layers.0.self_attn.q_proj.lora_") > 1e-3);
  CHECK(max_diff(one, start, "model.embed_tokens") == 0);  // the base is frozen
  CHECK(max_diff(one, start, "model.layers.1.mlp.down_proj.weight") == 0);
  for (int tp : {2, 4}) {
    CAPTURE(tp);
    const auto run =
        run_tp(dir.path(), "tp" + std::to_string(tp), tp, tp, {"--config", config, "--lora"});
    check_equals_one_rank(run[tp - 1], one);
  }
  const auto resave = (dir.path() / "lora_ckpt").string();
  run_tp(dir.path(), "save", 2, 2,
         {"--config", config, "--lora", "--steps", "2", "--save", resave});
  const auto straight =
      run_tp(dir.path(), "straight", 1, 1, {"--config", config, "--lora", "--steps", "4"})[0];
  const auto resumed = run_tp(dir.path(), "resume", 1, 1,
                              {"--config", config, "--lora", "--steps", "2", "--load", resave})[0];
  CHECK(max_diff(straight, resumed, "model.layers.") < kTight);
}

TEST_CASE("checkpoints are whole: saved at one tensor-parallel size, resumed at another",
          "[dist_tp]") {
  vime::test::TempDir dir;
  const auto straight = run_tp(dir.path(), "straight", 1, 1, {"--steps", "4"})[0];
  const std::string at2 = (dir.path() / "at2").string(), at1 = (dir.path() / "at1").string();
  SECTION("TP 2 x DP 2 (ZeRO-1) -> TP 1 and TP 4") {
    run_tp(dir.path(), "save", 4, 2, {"--steps", "2", "--distributed", "--save", at2});
    const auto to1 = run_tp(dir.path(), "load1", 1, 1, {"--steps", "2", "--load", at2})[0];
    CHECK(max_diff(straight, to1) < kTight);
    const auto to4 = run_tp(dir.path(), "load4", 4, 4, {"--steps", "2", "--load", at2});
    CHECK(max_diff(straight, to4[2]) < kTight);
  }
  SECTION("TP 1 -> TP 2") {
    run_tp(dir.path(), "save", 1, 1, {"--steps", "2", "--save", at1});
    const auto to2 = run_tp(dir.path(), "load2", 2, 2, {"--steps", "2", "--load", at1});
    CHECK(max_diff(straight, to2[1]) < kTight);
  }
}

TEST_CASE("tensor-parallel slices and shape checks", "[dist_tp]") {
  auto config = vime::ModelConfig::from_hf_dir(VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3");
  config.padded_vocab_size = 128;
  // 4 heads, 2 KV heads, FFN 48: TP 2 splits them all; TP 4 puts one head on each rank and each
  // KV head on two of them.
  vime::TensorParallel tp;
  tp.size = 4;
  tp.rank = 3;
  auto q = vime::tp_slice("model.layers.0.self_attn.q_proj.weight", config, tp);
  CHECK((q.dim == 0 && q.start == 48 && q.length == 16 && !q.is_duplicate));
  auto k = vime::tp_slice("model.layers.1.self_attn.k_proj.weight", config, tp);
  CHECK((k.dim == 0 && k.start == 16 && k.length == 16 && k.replica_index == 1 &&
         k.num_replica_slots == 2 && k.is_duplicate));  // rank 2 holds the first copy
  tp.rank = 2;
  CHECK(!vime::tp_slice("model.layers.1.self_attn.v_proj.weight", config, tp).is_duplicate);
  auto o = vime::tp_slice("model.layers.0.self_attn.o_proj.weight", config, tp);
  CHECK((o.dim == 1 && o.start == 32 && o.length == 16));
  auto down = vime::tp_slice("model.layers.0.mlp.down_proj.weight", config, tp);
  CHECK((down.dim == 1 && down.start == 24 && down.length == 12));
  auto embed = vime::tp_slice("model.embed_tokens.weight", config, tp);
  CHECK((embed.dim == 0 && embed.start == 64 && embed.length == 32));
  auto norm = vime::tp_slice("model.layers.0.self_attn.q_norm.weight", config, tp);
  CHECK((norm.dim < 0 && norm.is_duplicate));
  CHECK_NOTHROW(vime::check_tensor_parallel_shape(config, 4));
  CHECK_THROWS_WITH(
      vime::check_tensor_parallel_shape(config, 3),
      Catch::Contains("--tensor-model-parallel-size 3") && Catch::Contains("4 attention heads"));
  CHECK_THROWS_WITH(vime::check_tensor_parallel_shape(config, 8),
                    Catch::Contains("--tensor-model-parallel-size 8"));
  CHECK_THROWS_WITH(vime::dist::make_parallel_groups(nullptr, 2),
                    Catch::Contains("--tensor-model-parallel-size 2 does not divide the 1"));
}
