// The embedded backend: the NativeEngine generates with the trainer's Model itself, so a weight
// update is a version bump (the optimizer changed the very tensors the engine reads). Under
// tensor parallelism the same holds at any size: the ranks of a tensor-parallel group run one
// engine together, each on its own shards (engine/model_runner.hpp); its rank 0 takes requests.
#include "vime/loop/native_backend.hpp"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/dist/process_group.hpp"
#include "vime/engine/engine_balancer.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/engine/vllm_engine.hpp"
#include "vime/error.hpp"
#include "vime/loop/rank_engines.hpp"
#include "vime/loop/run_models.hpp"

namespace vime::loop {
namespace {

// A remote rank that does not answer for this long is skipped and its requests go elsewhere.
constexpr double kRankRetryDeadlineS = 30;

// Each rank draws the seeds of unseeded requests from its own stream (seeded requests, as
// --vllm-enable-deterministic-inference sends, give the same sample on any rank).
engine::NativeEngineOptions rank_engine_options(const Args& args, int rank) {
  auto options = engine_options(args);
  options.seed += 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank);
  return options;
}

std::string sharded(const Model& model) {
  const auto& tp = model.tensor_parallel();
  if (!tp.is_parallel()) return "";
  return ", tensor-parallel over " + std::to_string(tp.size) +
         " ranks (each runs its own shards of the trainer's model)";
}

// The trainer's own engine, paused and emptied while it trains.
class EmbeddedEngine {
 public:
  EmbeddedEngine(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version,
                 int rank)
      : model_(model), engine_(model, tokenizer, rank_engine_options(args, rank)) {
    engine_.set_weight_version(std::to_string(version));
  }
  void before_train() {
    engine_.pause();
    count_rollout(engine_.stats());  // before the release: the cache's size is still there
    engine_.release_memory();
  }
  // What the engine counted over the rollout that just ended.
  const Metrics& rollout_metrics() const { return rollout_metrics_; }
  void update_weights(int64_t version) {
    engine_.set_weight_version(std::to_string(version));
    engine_.resume();
  }
  engine::NativeEngine& engine() { return engine_; }
  Model& model() { return model_; }
  const Model& model() const { return model_; }

 private:
  void count_rollout(const engine::EngineStats& now) {
    rollout_metrics_ = {
        {"rollout/engine_preemptions", double(now.preempted - counted_.preempted)},
        {"rollout/engine_out_of_memory_steps",
         double(now.out_of_memory_steps - counted_.out_of_memory_steps)},
        {"rollout/engine_kv_cache_gib", double(now.kv_cache_bytes) / double(1ll << 30)}};
    counted_ = now;
  }

  Model& model_;
  engine::NativeEngine engine_;
  engine::EngineStats counted_;
  Metrics rollout_metrics_;
};

class NativeBackend final : public RolloutBackend {
 public:
  NativeBackend(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version)
      : local_(args, model, tokenizer, version, 0) {}
  EngineClient& engine() override { return local_.engine(); }
  void before_train() override { local_.before_train(); }
  void update_weights(Model&, int64_t version) override { local_.update_weights(version); }
  std::string describe() const override { return "embedded engine" + sharded(local_.model()); }
  Metrics engine_metrics() const override { return local_.rollout_metrics(); }

 private:
  EmbeddedEngine local_;
};

// A tensor-parallel rank > 0: its part of its group's engine runs the forwards that the group's
// rank 0 schedules; it takes no requests.
class TpFollowerBackend final : public RolloutBackend {
 public:
  TpFollowerBackend(const Args& args, Model& model, int64_t version, int rank)
      : local_(args, model, nullptr, version, rank), rank_(rank) {}
  EngineClient& engine() override {
    throw Error("rank " + std::to_string(rank_) +
                ": a tensor-parallel rank > 0 does not take requests; its group's rank 0 does");
  }
  void before_train() override { local_.before_train(); }
  void update_weights(Model&, int64_t version) override { local_.update_weights(version); }
  std::string describe() const override {
    return "its shards of the tensor-parallel engine of rank " +
           std::to_string(rank_ - local_.model().tensor_parallel().rank);
  }

 private:
  EmbeddedEngine local_;
  int rank_;
};

// Rank 0: its own engine and every other rank's, one client.
class FleetBackend final : public RolloutBackend {
 public:
  FleetBackend(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version,
               dist::ProcessGroup& group)
      : local_(args, model, tokenizer, version, 0),
        ranks_(group.size() / model.tensor_parallel().size) {
    fleet_.add("rank 0 (local)", local_.engine());
    auto& store = group.store();
    const int tp = model.tensor_parallel().size;
    for (const auto& address : wait_for_rank_engines(store, group.size(), store.getTimeout(), tp)) {
      auto options = engine::VllmEngineOptions::from(args);
      options.worker_urls = {address.url};
      options.api_key = address.api_key;
      options.retry_deadline_s = kRankRetryDeadlineS;
      auto remote = std::make_unique<engine::VllmEngine>(options);
      remote->set_weight_version(std::to_string(version));
      remotes_.push_back(remote.get());
      fleet_.add("rank " + std::to_string(address.rank) + " (" + address.url + ")",
                 std::move(remote));
    }
  }
  EngineClient& engine() override { return fleet_; }
  void before_train() override { local_.before_train(); }
  void update_weights(Model&, int64_t version) override {
    // The other ranks bump their own engines' versions; responses carry them.
    for (auto* remote : remotes_) remote->set_weight_version(std::to_string(version));
    local_.update_weights(version);
  }
  Metrics engine_metrics() const override { return local_.rollout_metrics(); }  // rank 0's
  std::string describe() const override {
    const bool tp = local_.model().tensor_parallel().is_parallel();
    return "embedded engines on " + std::to_string(ranks_) +
           (tp ? " data-parallel groups" : " ranks") + sharded(local_.model());
  }

 private:
  EmbeddedEngine local_;
  engine::EngineBalancer fleet_;  // after local_: it borrows its engine
  std::vector<engine::VllmEngine*> remotes_;
  int ranks_;
};

// Ranks > 0: the rank's engine behind vLLM's HTTP API, for rank 0's fleet.
class ServingBackend final : public RolloutBackend {
 public:
  ServingBackend(const Args& args, Model& model, const Tokenizer& tokenizer, int64_t version,
                 dist::ProcessGroup& group)
      : rank_(group.rank()),
        local_(args, model, &tokenizer, version, rank_),
        server_(local_.engine(), local_.model(), tokenizer, group.store(), rank_,
                advertised_host(group.store()), server_threads(args)) {}
  EngineClient& engine() override {
    throw Error("rank " + std::to_string(rank_) +
                ": only rank 0 generates rollouts; this rank's engine serves it at " +
                server_.address().url);
  }
  void before_train() override { local_.before_train(); }
  void update_weights(Model&, int64_t version) override { local_.update_weights(version); }
  std::string describe() const override {
    return "embedded engine of rank " + std::to_string(rank_) + ", serving rank 0 at " +
           server_.address().url;
  }

 private:
  // One HTTP worker per request rank 0 may have in flight here (--vllm-server-concurrency).
  static int server_threads(const Args& args) {
    const auto n = engine::VllmEngineOptions::from(args).concurrency_per_worker;
    return static_cast<int>(std::clamp<int64_t>(n, 64, 1024));
  }

  int rank_;
  EmbeddedEngine local_;
  RankEngineServer server_;  // after local_: stops before the engine goes
};

}  // namespace

std::unique_ptr<RolloutBackend> make_native_backend(const Args& args, Model& model,
                                                    const Tokenizer* tokenizer, int64_t version,
                                                    dist::ProcessGroup* group) {
  if (model.expert_parallel().is_parallel()) {
    throw UsageError("--expert-model-parallel-size " +
                     std::to_string(model.expert_parallel().size) +
                     ": the embedded engine generates with the trainer's model, whose experts are "
                     "split over the expert-parallel ranks; use --rollout-backend vllm (its "
                     "weight updates gather the experts whole)");
  }
  const auto& tp = model.tensor_parallel();
  if (tp.is_parallel() && tp.rank != 0)
    return std::make_unique<TpFollowerBackend>(args, model, version, group->rank());
  if (group == nullptr || group->size() == tp.size)
    return std::make_unique<NativeBackend>(args, model, tokenizer, version);
  if (tokenizer == nullptr)
    throw Error("the embedded engines of several ranks need the run's tokenizer");
  if (group->rank() == 0)
    return std::make_unique<FleetBackend>(args, model, tokenizer, version, *group);
  return std::make_unique<ServingBackend>(args, model, *tokenizer, version, *group);
}

}  // namespace vime::loop
