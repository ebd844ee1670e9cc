// Async training: the trainer -> replica weight copy, the version-lag and option rules,
// and `vime train --async` / `--fully-async` end to end on the tiny task with engine replicas on
// the CPU (a second model copy standing for another device; its engine thread generates while the
// trainer's thread trains).
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/loop/async_options.hpp"
#include "vime/loop/replica_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/version_lag.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/device_weight_copy.hpp"

namespace fs = std::filesystem;
using vime::test::run_vime;
using Strings = std::vector<std::string>;

namespace {

vime::Args parse(Strings tokens) { return vime::core::parse_args(tokens); }

vime::ModelConfig tiny_config(int64_t layers = 2) {
  vime::ModelConfig c;
  c.vocab_size = 97;
  c.padded_vocab_size = 128;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.num_layers = layers;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  return c;
}

// The set of weight_versions lists of every sample of one --save-debug-rollout-data file.
std::set<Strings> versions_in(const fs::path& file) {
  const auto dump = vime::Json::parse(vime::read_text_file(file));
  std::set<Strings> out;
  for (const auto& s : dump.at("samples").as_array()) {
    Strings v;
    for (const auto& e : s.at("weight_versions").as_array()) v.push_back(e.as_string());
    out.insert(v);
  }
  return out;
}

// Every metric of a run but the timings and the engine-vs-trainer log-prob gap (the engine's
// batch composition moves it in the last bits from run to run).
// The metrics a run must repeat bitwise. Left out: timing; the prefix cache's hits, which depend
// on the order requests arrive in; and the engine's own log-probs, whose last bits depend on the
// batch they were computed in (cached prefixes change the shapes).
std::map<std::string, std::vector<double>> results_of(const fs::path& metrics) {
  auto m = vime::test::read_metrics(metrics);
  std::map<std::string, std::vector<double>> out;
  for (auto& [k, v] : m)
    if (k.rfind("perf/", 0) != 0 && k != "_timestamp" &&
        k.find("train_rollout_logprob_abs_diff") == std::string::npos &&
        k != "rollout/avg_cached_tokens_per_sample" && k != "rollout/prefix_cache_hit_rate" &&
        k != "rollout/rollout_log_probs" &&
        k.rfind("rollout/engine_", 0) != 0)  // the embedded engine's own counts
      out[k] = v;
  return out;
}

std::string flags(const std::string& lr = "1e-4") {
  return vime::test::tiny_grpo_flags(lr) + "--vllm-enable-deterministic-inference ";
}

}  // namespace

TEST_CASE("copy_weights_packed: trainer -> replica through buckets, exact, mismatches named",
          "[async]") {
  at::NoGradGuard no_grad;
  vime::Model trainer(tiny_config(), at::kFloat, at::Device(at::kCPU), 1);
  vime::Model replica(tiny_config(), at::kFloat, at::Device(at::kCPU), 2);
  replica.set_requires_grad(false);
  const auto& a = trainer.named_parameters();
  const auto& b = replica.named_parameters();
  REQUIRE_FALSE(at::equal(a.front().second, b.front().second));
  // 1 KiB buckets: many packed transfers, tensors larger than a bucket go alone.
  auto stats = vime::weight_sync::copy_weights_packed(a, b, 1024);
  int64_t bytes = 0;
  for (const auto& [n, t] : a) bytes += t.numel() * static_cast<int64_t>(t.element_size());
  CHECK(stats.bytes == bytes);
  CHECK(stats.buckets > 3);
  CHECK(stats.buckets < static_cast<int64_t>(a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].first);
    CHECK(at::equal(a[i].second, b[i].second));
  }
  // The raw bar moves the same bytes, one copy per tensor.
  auto raw = vime::weight_sync::copy_weights_raw(a, b);
  CHECK(raw.bytes == bytes);
  CHECK(raw.buckets == static_cast<int64_t>(a.size()));
  // A replica of another shape is refused before a byte moves.
  vime::Model other(tiny_config(3), at::kFloat, at::Device(at::kCPU), 3);
  CHECK_THROWS_WITH(vime::weight_sync::copy_weights_packed(a, other.named_parameters(), 1024),
                    Catch::Contains("parameters"));
  vime::ModelConfig wide = tiny_config();
  wide.intermediate_size = 48;
  vime::Model narrow(wide, at::kFloat, at::Device(at::kCPU), 4);
  CHECK_THROWS_WITH(vime::weight_sync::copy_weights_packed(a, narrow.named_parameters(), 1024),
                    Catch::Contains("does not match"));
}

TEST_CASE("version lags: the oldest version of each sample against the rollout id", "[async]") {
  std::vector<vime::Sample> samples(3);
  samples[0].weight_versions = {"4"};
  samples[1].weight_versions = {"3", "4"};  // resumed across an update: the oldest counts
  samples[2].weight_versions = {"4"};
  samples[2].metadata["start_weight_version"] = 2;  // the fully async rollout's tag
  auto lags = vime::loop::version_lags(samples, 5);
  CHECK(lags.metrics["rollout/async/version_lag_min"] == 1);
  CHECK(lags.metrics["rollout/async/version_lag_max"] == 3);
  CHECK(lags.metrics["rollout/async/version_lag_mean"] == Approx(2.0));
  CHECK_FALSE(lags.uniform.has_value());
  samples.resize(1);
  CHECK(vime::loop::version_lags(samples, 5).uniform == 1);
  // Versions that are no numbers (an external engine's tags) are left out.
  samples[0].weight_versions = {"abc"};
  CHECK(vime::loop::version_lags(samples, 5).metrics.empty());
}

TEST_CASE("async options: modes, interval and staleness rules; replica placement", "[async]") {
  using vime::loop::AsyncMode;
  using vime::loop::AsyncOptions;
  CHECK(AsyncOptions::from(parse({})).mode == AsyncMode::kOff);
  CHECK(AsyncOptions::from(parse({"--async"})).mode == AsyncMode::kOneStep);
  CHECK(AsyncOptions::from(parse({"--fully-async"})).mode == AsyncMode::kFully);
  CHECK(
      AsyncOptions::from(parse({"--rollout-function-path",
                                "slime.rollout.fully_async_rollout.generate_rollout_fully_async"}))
          .mode == AsyncMode::kFully);
  CHECK(AsyncOptions::from(parse({"--async", "--update-weights-interval", "3"}))
            .update_weights_interval == 3);
  CHECK_THROWS_AS(AsyncOptions::from(parse({"--update-weights-interval", "2"})), vime::UsageError);
  CHECK_THROWS_AS(AsyncOptions::from(parse({"--async", "--update-weights-interval", "0"})),
                  vime::UsageError);
  CHECK_THROWS_AS(AsyncOptions::from(parse({"--async", "--max-staleness", "1"})), vime::UsageError);
  CHECK_THROWS_AS(AsyncOptions::from(parse({"--fully-async", "--max-staleness", "-1"})),
                  vime::UsageError);
  CHECK_THROWS_AS(AsyncOptions::from(parse({"--async", "--colocate"})), vime::UsageError);

  // The embedded backend disaggregates with --rollout-num-gpus (no --colocate) or --async.
  using vime::loop::RolloutBackendOptions;
  CHECK_FALSE(RolloutBackendOptions::from(parse({})).engine_replicas.has_value());
  CHECK_FALSE(RolloutBackendOptions::from(parse({"--colocate", "--rollout-num-gpus", "2"}))
                  .engine_replicas.has_value());
  CHECK(RolloutBackendOptions::from(parse({"--async"})).engine_replicas == 1);
  CHECK(RolloutBackendOptions::from(parse({"--rollout-num-gpus", "2"})).engine_replicas == 2);
  CHECK_FALSE(RolloutBackendOptions::from(
                  parse({"--async", "--rollout-backend", "vllm", "--rollout-num-gpus", "1"}))
                  .engine_replicas.has_value());

  using vime::loop::replica_devices;
  CHECK(replica_devices(c10::Device("cpu"), 2, 0) ==
        std::vector<c10::Device>{c10::Device("cpu"), c10::Device("cpu")});
  CHECK(replica_devices(c10::Device("cuda:0"), 2, 3) ==
        std::vector<c10::Device>{c10::Device("cuda:1"), c10::Device("cuda:2")});
  CHECK(replica_devices(c10::Device("cuda:1"), 1, 3) ==
        std::vector<c10::Device>{c10::Device("cuda:2")});
  CHECK_THROWS_WITH(replica_devices(c10::Device("cuda:0"), 2, 2),
                    Catch::Contains("--rollout-num-gpus 2") && Catch::Contains("2 GPU(s)"));
  CHECK_THROWS_AS(replica_devices(c10::Device("cpu"), 0, 0), vime::UsageError);
}

TEST_CASE("vime train: --async off is today's loop; a replica in turn gives the same run",
          "[async]") {
  vime::test::TempDir run;
  auto embedded =
      run_vime("train " + flags() + "--num-rollout 3 --metrics-jsonl " +
               (run.path() / "embedded.jsonl").string() + " --save-debug-rollout-data " +
               (run.path() / "e_{rollout_id}.json").string());
  INFO(embedded.output);
  REQUIRE(embedded.exit_code == 0);
  CHECK_THAT(embedded.output, !Catch::Contains("replica"));
  auto replica =
      run_vime("train " + flags() + "--num-rollout 3 --rollout-num-gpus 1 " + "--metrics-jsonl " +
               (run.path() / "replica.jsonl").string() + " --save-debug-rollout-data " +
               (run.path() / "r_{rollout_id}.json").string());
  INFO(replica.output);
  REQUIRE(replica.exit_code == 0);
  CHECK_THAT(replica.output, Catch::Contains("1 engine replica(s) on cpu"));
  const auto a = results_of(run.path() / "embedded.jsonl");
  const auto b = results_of(run.path() / "replica.jsonl");
  REQUIRE(a.count("train/pg_loss") == 1);
  CHECK(a == b);  // bitwise: the replica holds the trainer's exact weights at every rollout
  for (int k = 0; k < 3; ++k) {
    const auto v = Strings{std::to_string(k)};
    CHECK(versions_in(run.path() / ("e_" + std::to_string(k) + ".json")) == std::set<Strings>{v});
    CHECK(versions_in(run.path() / ("r_" + std::to_string(k) + ".json")) == std::set<Strings>{v});
  }
  // The replica run reports its weight copies; the sync loop never overlaps.
  auto m = vime::test::read_metrics(run.path() / "replica.jsonl");
  CHECK(m["perf/weight_transfer_bytes"].size() == 3);
  for (double f : m["perf/rollout_train_overlap_fraction"]) CHECK(f == 0.0);
  CHECK(
      vime::test::read_metrics(run.path() / "embedded.jsonl").count("perf/weight_transfer_bytes") ==
      0);
}

TEST_CASE("vime train --async: one step off-policy, versions per sample, lag metrics, TIS",
          "[async]") {
  vime::test::TempDir run;
  // Random rewards and a large step so the weights move: the engine's log-probs then differ from
  // the trainer's once they lag.
  const std::string base =
      vime::test::tiny_grpo_flags("1e-3") +
      "--rm-type random --use-tis --num-rollout 4 --vllm-enable-deterministic-inference ";
  auto r =
      run_vime("train " + base + "--async --metrics-jsonl " + (run.path() / "m.jsonl").string() +
               " --save-debug-rollout-data " + (run.path() / "a_{rollout_id}.json").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Rollout 0 and 1 generate on the first weights; from then on rollout k on version k - 1.
  const std::vector<std::string> expected = {"0", "0", "1", "2"};
  for (int k = 0; k < 4; ++k) {
    INFO("rollout " << k);
    CHECK(versions_in(run.path() / ("a_" + std::to_string(k) + ".json")) ==
          std::set<Strings>{{expected[k]}});
  }
  auto m = vime::test::read_metrics(run.path() / "m.jsonl");
  CHECK(m["rollout/async/version_lag_mean"] == std::vector<double>{0, 1, 1, 1});
  REQUIRE(m["train/train_rollout_logprob_abs_diff/lag_0"].size() == 1);
  REQUIRE(m["train/train_rollout_logprob_abs_diff/lag_1"].size() == 3);
  const double on_policy = m["train/train_rollout_logprob_abs_diff/lag_0"][0];
  CHECK(on_policy < 1e-4);
  for (double d : m["train/train_rollout_logprob_abs_diff/lag_1"]) CHECK(d > 100 * on_policy);
  // TIS sees the lag: its weights move off 1 once the rollout is a version behind.
  REQUIRE(m["train/tis"].size() == 4);
  CHECK(m["train/tis"][0] == Approx(1.0).margin(1e-4));
  // (Rollout 1's deviation alone was once 5.1e-4: how far one step moves the weights depends on
  // the random rewards; the lagged rollouts together stay well clear of on-policy's 1e-4.)
  double lagged_deviation = 0;
  for (int k = 1; k < 4; ++k)
    lagged_deviation = std::max(lagged_deviation, std::abs(m["train/tis"][k] - 1.0));
  CHECK(lagged_deviation > 1e-3);
  // Rollout k + 1 generated while k trained.
  REQUIRE(m["perf/rollout_train_overlap_fraction"].size() == 4);
  CHECK(m["perf/rollout_train_overlap_fraction"][0] > 0);
  CHECK(m["perf/rollout_train_overlap_fraction"][3] == 0);  // nothing left to generate

  SECTION("--update-weights-interval 2: weights after rollouts 1 and 3 only") {
    auto r2 = run_vime("train " + base + "--async --update-weights-interval 2 --metrics-jsonl " +
                       (run.path() / "m2.jsonl").string() + " --save-debug-rollout-data " +
                       (run.path() / "b_{rollout_id}.json").string());
    INFO(r2.output);
    REQUIRE(r2.exit_code == 0);
    const std::vector<std::string> expected2 = {"0", "0", "0", "2"};
    for (int k = 0; k < 4; ++k) {
      INFO("rollout " << k);
      CHECK(versions_in(run.path() / ("b_" + std::to_string(k) + ".json")) ==
            std::set<Strings>{{expected2[k]}});
    }
    auto m2 = vime::test::read_metrics(run.path() / "m2.jsonl");
    CHECK(m2["rollout/async/version_lag_mean"] == std::vector<double>{0, 1, 2, 1});
    CHECK(m2["perf/weight_transfer_time"].size() == 2);
  }
}

TEST_CASE("vime train --fully-async: continuous generation, staleness bound, slime's entry name",
          "[async]") {
  vime::test::TempDir run;
  auto r = run_vime("train " + flags() + "--num-rollout 4 --fully-async --max-staleness 0 " +
                    "--metrics-jsonl " + (run.path() / "m.jsonl").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto m = vime::test::read_metrics(run.path() / "m.jsonl");
  // Nothing older than the trainer's version trains; what went stale was generated again.
  REQUIRE(m["rollout/async/version_lag_max"].size() == 4);
  for (double lag : m["rollout/async/version_lag_max"]) CHECK(lag == 0);
  double dropped = 0;
  for (double d : m["rollout/async/stale_dropped_groups"]) dropped += d;
  CHECK(dropped > 0);

  // slime's --rollout-function-path selects it too; without a bound, groups may lag.
  auto slime = run_vime("train " + flags() + "--num-rollout 3 --rollout-function-path " +
                        "slime.rollout.fully_async_rollout.generate_rollout_fully_async " +
                        "--metrics-jsonl " + (run.path() / "s.jsonl").string());
  INFO(slime.output);
  REQUIRE(slime.exit_code == 0);
  auto s = vime::test::read_metrics(run.path() / "s.jsonl");
  CHECK(s["rollout/async/stale_dropped_groups"] == std::vector<double>{0, 0, 0});
  CHECK(s["rollout/async/version_lag_max"].size() == 3);
}

TEST_CASE("vime train: async flags it cannot honour are refused by name", "[async]") {
  for (const auto& [extra, says] : std::vector<std::pair<std::string, std::string>>{
           {"--update-weights-interval 2", "needs --async"},
           {"--async --colocate", "--colocate"},
           {"--async --max-staleness 1", "--max-staleness needs --fully-async"}}) {
    auto r = run_vime("train " + flags() + "--num-rollout 1 " + extra);
    INFO(extra << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(says));
  }
}

// LoRA: a replica holds the base once and takes only the adapters' bytes at each update; it
// generates as the embedded engine does on the trainer's own model (base + adapters).
TEST_CASE("vime train --lora-rank: a replica gets the adapters alone and gives the same run",
          "[async]") {
  vime::test::TempDir run;
  const std::string lora = "--lora-rank 4 --lora-alpha 8 --lr 1e-2 ";
  auto embedded = run_vime("train " + flags() + lora + "--num-rollout 3 --metrics-jsonl " +
                           (run.path() / "embedded.jsonl").string());
  INFO(embedded.output);
  REQUIRE(embedded.exit_code == 0);
  auto replica = run_vime("train " + flags() + lora + "--num-rollout 3 --rollout-num-gpus 1 " +
                          "--metrics-jsonl " + (run.path() / "replica.jsonl").string());
  INFO(replica.output);
  REQUIRE(replica.exit_code == 0);
  auto full = run_vime("train " + flags() + "--num-rollout 1 --rollout-num-gpus 1 " +
                       "--metrics-jsonl " + (run.path() / "full.jsonl").string());
  REQUIRE(full.exit_code == 0);
  CHECK(results_of(run.path() / "embedded.jsonl") == results_of(run.path() / "replica.jsonl"));
  auto m = vime::test::read_metrics(run.path() / "replica.jsonl");
  const double model_bytes =
      vime::test::read_metrics(run.path() / "full.jsonl")["perf/weight_transfer_bytes"].at(0);
  REQUIRE(m["perf/weight_transfer_bytes"].size() == 3);
  for (double bytes : m["perf/weight_transfer_bytes"]) {
    CHECK(bytes > 0);
    CHECK(bytes < model_bytes / 4);  // rank 4 on a 64-wide model: the adapters are a fraction
  }
}
