#include "vime/loop/replica_backend.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <mutex>

#include "vime/engine/engine_balancer.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/device_weight_copy.hpp"

namespace vime::loop {
namespace {

std::string device_name(const c10::Device& d) { return d.str(); }

// One engine on its own copy of the model.
struct Replica {
  std::unique_ptr<Model> model;
  std::unique_ptr<engine::NativeEngine> engine;
};

class ReplicaBackend final : public RolloutBackend {
 public:
  ReplicaBackend(const Args& args, Model& trainer, const Tokenizer* tokenizer, int64_t version,
                 const std::vector<c10::Device>& devices, std::ostream& console)
      : bucket_bytes_(args.get_int("update_weight_buffer_size")) {
    for (size_t i = 0; i < devices.size(); ++i) {
      auto r = std::make_unique<Replica>();
      r->model = std::make_unique<Model>(trainer.config(), trainer.dtype(), devices[i]);
      if (trainer.has_lora()) {  // the same adapters: an update sends them alone
        r->model->add_lora(trainer.lora_config());
        for (auto& [name, t] : r->model->lora_parameters()) t.requires_grad_(false);
      }
      r->model->set_requires_grad(false);
      auto options = engine_options(args);
      // Replica 0 draws the seeds of unseeded requests as the colocated engine does (the same
      // samples from the same weights); the others from their own streams.
      options.seed += 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i);
      r->engine = std::make_unique<engine::NativeEngine>(*r->model, tokenizer, options);
      names_.push_back("replica " + std::to_string(i) + " (" + device_name(devices[i]) + ")");
      replicas_.push_back(std::move(r));
    }
    if (replicas_.size() > 1)
      for (size_t i = 0; i < replicas_.size(); ++i) fleet_.add(names_[i], *replicas_[i]->engine);
    push(trainer, version);
    console << "vime train: " << replicas_.size() << " engine replica(s) on";
    for (const auto& d : devices) console << " " << device_name(d);
    console << "; first weight copy " << last_.bytes / (1 << 20) << " MiB in " << last_.buckets
            << " bucket(s), " << last_.seconds << " s\n";
  }

  EngineClient& engine() override {
    if (replicas_.size() == 1) return *replicas_.front()->engine;
    return fleet_;
  }
  // The replicas have their own devices (or copies): they go on generating.
  void before_train() override {}
  void update_weights(Model& model, int64_t version) override { push(model, version); }
  std::string describe() const override {
    std::string s = std::to_string(replicas_.size()) + " embedded engine replica(s):";
    for (const auto& n : names_) s += " " + n;
    return s;
  }
  std::optional<int64_t> generated_tokens() const override {
    int64_t n = 0;
    for (const auto& r : replicas_) n += r->engine->stats().generated_tokens;
    return n;
  }
  Metrics update_metrics() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    Metrics m;
    m["perf/weight_transfer_time"] = last_.seconds;
    m["perf/weight_transfer_bytes"] = static_cast<double>(last_.bytes);
    if (last_.seconds > 0)
      m["perf/weight_transfer_gb_per_s"] = static_cast<double>(last_.bytes) / last_.seconds / 1e9;
    return m;
  }

 private:
  // Each replica in turn: held (requests in flight keep their place), overwritten, re-tagged,
  // resumed; the others keep generating meanwhile.
  void push(Model& trainer, int64_t version) {
    at::NoGradGuard no_grad;
    weight_sync::DeviceCopyStats total;
    for (auto& r : replicas_) {
      r->engine->pause();
      try {
        // With LoRA the frozen base goes once; then the adapters' bytes alone.
        const bool adapters_only = trainer.has_lora() && base_copied_;
        weight_sync::DeviceCopyStats s;
        if (!adapters_only) {
          s = weight_sync::copy_weights_packed(trainer.named_parameters(),
                                               r->model->named_parameters(), bucket_bytes_);
        }
        if (trainer.has_lora()) {
          auto a = weight_sync::copy_weights_packed(trainer.lora_parameters(),
                                                    r->model->lora_parameters(), bucket_bytes_);
          s.bytes += a.bytes;
          s.buckets += a.buckets;
          s.seconds += a.seconds;
        }
        total.bytes += s.bytes;
        total.buckets += s.buckets;
        total.seconds += s.seconds;
      } catch (...) {
        r->engine->resume();
        throw;
      }
      r->engine->set_weight_version(std::to_string(version));
      r->engine->resume();
    }
    base_copied_ = true;
    std::lock_guard<std::mutex> lock(mutex_);
    last_ = total;
  }

  int64_t bucket_bytes_;
  bool base_copied_ = false;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::string> names_;
  engine::EngineBalancer fleet_;  // borrows the replicas' engines (destroyed first)
  mutable std::mutex mutex_;
  weight_sync::DeviceCopyStats last_;
};

}  // namespace

std::vector<c10::Device> replica_devices(const c10::Device& trainer, int64_t count,
                                         int64_t visible_gpus) {
  if (count < 1) {
    throw UsageError("--rollout-num-gpus " + std::to_string(count) +
                     ": the embedded engine replicas need at least one device (use --colocate to "
                     "generate on the trainer's own model)");
  }
  std::vector<c10::Device> out;
  for (int64_t i = 0; i < count; ++i) {
    if (trainer.is_cpu()) {
      out.emplace_back(c10::kCPU);
      continue;
    }
    const int64_t index = trainer.index() + 1 + i;
    if (index >= visible_gpus) {
      throw UsageError("--rollout-num-gpus " + std::to_string(count) +
                       ": the engine replicas go on the GPUs after the trainer's (cuda:" +
                       std::to_string(trainer.index() + 1) + " on), and this node shows " +
                       std::to_string(visible_gpus) +
                       " GPU(s); lower --rollout-num-gpus or use --colocate");
    }
    out.emplace_back(trainer.type(), static_cast<c10::DeviceIndex>(index));
  }
  return out;
}

std::unique_ptr<RolloutBackend> make_replica_backend(const Args& args, Model& model,
                                                     const Tokenizer* tokenizer, int64_t version,
                                                     int64_t count, std::ostream& console) {
  const auto trainer = model.device();
  const int64_t gpus =
      trainer.is_cpu()
          ? 0
          : static_cast<int64_t>(c10::impl::getDeviceGuardImpl(trainer.type())->deviceCount());
  return std::make_unique<ReplicaBackend>(args, model, tokenizer, version,
                                          replica_devices(trainer, count, gpus), console);
}

}  // namespace vime::loop
