// The embedded backend: the NativeEngine generates with the trainer's Model itself, so a weight
// update is a version bump (the optimizer changed the very tensors the engine reads). Under
// tensor parallelism each rank's engine runs the whole model gathered from the shards instead.
#include "vime/loop/native_backend.hpp"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/dist/process_group.hpp"
#include "vime/engine/fleet_engine.hpp"
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

// Under tensor parallelism the engine has no sharded forward yet: each rank's engine runs the
// whole model, gathered from the trainer's shards (a collective of the tensor-parallel group, at
// start and at every weight update). Null without tensor parallelism.
std::unique_ptr<Model> gathered_copy(const Model& model) {
  if (!model.tensor_parallel().is_parallel()) return nullptr;
  auto whole = std::make_unique<Model>(model.config(), model.dtype(), model.device());
  whole->set_requires_grad(false);
  return whole;
}

void gather_into(Model& whole, const Model& sharded) {
  at::NoGradGuard no_grad;
  const auto& params = whole.named_parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].second.copy_(sharded.full_parameter(i));
}

// The trainer's own engine, paused and emptied while it trains.
class EmbeddedEngine {
 public:
  EmbeddedEngine(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version,
                 int rank)
      : trainer_model_(model),
        whole_(gathered_copy(model)),
        engine_(whole_ ? *whole_ : model, tokenizer, rank_engine_options(args, rank)) {
    if (whole_) gather_into(*whole_, trainer_model_);
    engine_.set_weight_version(std::to_string(version));
  }
  void before_train() {
    engine_.pause();
    engine_.release_memory();
  }
  void update_weights(int64_t version) {
    if (whole_) gather_into(*whole_, trainer_model_);
    engine_.set_weight_version(std::to_string(version));
    engine_.resume();
  }
  engine::NativeEngine& engine() { return engine_; }
  Model& model() { return whole_ ? *whole_ : trainer_model_; }  // the one the engine runs

 private:
  Model& trainer_model_;
  std::unique_ptr<Model> whole_;  // tensor parallel: the gathered model the engine runs
  engine::NativeEngine engine_;
};

class NativeBackend final : public RolloutBackend {
 public:
  NativeBackend(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version)
      : local_(args, model, tokenizer, version, 0) {}
  EngineClient& engine() override { return local_.engine(); }
  void before_train() override { local_.before_train(); }
  void update_weights(Model&, int64_t version) override { local_.update_weights(version); }
  std::string describe() const override { return "embedded engine"; }

 private:
  EmbeddedEngine local_;
};

// Rank 0: its own engine and every other rank's, one client.
class FleetBackend final : public RolloutBackend {
 public:
  FleetBackend(const Args& args, Model& model, const Tokenizer* tokenizer, int64_t version,
               dist::ProcessGroup& group)
      : local_(args, model, tokenizer, version, 0), ranks_(group.size()) {
    fleet_.add("rank 0 (local)", local_.engine());
    auto& store = group.store();
    for (const auto& address : wait_for_rank_engines(store, group.size(), store.getTimeout())) {
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
  std::string describe() const override {
    return "embedded engines on " + std::to_string(ranks_) + " ranks";
  }

 private:
  EmbeddedEngine local_;
  engine::FleetEngine fleet_;  // after local_: it borrows its engine
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
  if (group == nullptr || group->size() == 1)
    return std::make_unique<NativeBackend>(args, model, tokenizer, version);
  if (tokenizer == nullptr)
    throw Error("the embedded engines of several ranks need the run's tokenizer");
  if (group->rank() == 0)
    return std::make_unique<FleetBackend>(args, model, tokenizer, version, *group);
  return std::make_unique<ServingBackend>(args, model, *tokenizer, version, *group);
}

}  // namespace vime::loop
