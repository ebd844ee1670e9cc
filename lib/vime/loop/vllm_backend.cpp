#include "vime/loop/vllm_backend.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iomanip>
#include <mutex>
#include <set>
#include <sstream>

#include "vime/engine/vllm_engine.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/http/fetch.hpp"
#include "vime/launch/engine_fleet.hpp"
#include "vime/launch/health_monitor.hpp"
#include "vime/loop/vllm_backend_options.hpp"
#include "vime/model/model.hpp"
#include "vime/plugin/hook_flags.hpp"
#include "vime/weight_sync/disk_weight_sender.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"

namespace vime::loop {
namespace {

// Control-plane POSTs go to every engine itself, never through a router (vllm-router forwards only
// generation routes).
void post_all(const std::vector<std::string>& urls, const std::string& path, double timeout_s,
              const std::string& api_key) {
  for (const auto& url : urls) {
    auto r = http::fetch(
        http::Request::post_json(url + path, Json::object(), timeout_s).bearer(api_key));
    if (!r.ok()) throw Error("vLLM engine " + url + path + ": " + r.describe());
  }
}

class VllmBackend final : public RolloutBackend {
 public:
  VllmBackend(const Args& args, VllmBackendOptions options, Model& model, int64_t version,
              std::ostream& console)
      : console_(console),
        transport_(options.launch.engines.weight_transport),
        sleep_(options.launch.engines.engines_sleep_while_training()),
        timeout_s_(options.weight_transfer_timeout_s) {
    if (options.launch.engines.colocate && transport_ != launch::WeightTransport::kDisk) {
      throw UsageError(
          "--colocate with the vLLM backend: vime sends colocated engines their weights from disk "
          "(vLLM's colocated IPC path passes pickled Python objects); add "
          "--update-weight-transport disk --update-weight-disk-dir DIR");
    }
    if (transport_ == launch::WeightTransport::kNccl && !model.device().is_cuda()) {
      throw UsageError(
          "--update-weight-transport nccl needs the trainer on a CUDA device (this run trains on "
          "the CPU); use --update-weight-transport disk --update-weight-disk-dir DIR");
    }
    launch::FleetOptions fleet_options;
    fleet_options.progress = [this](const std::string& line) {
      console_ << "vime train: " << line << std::endl;
    };
    fleet_options.external_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(1000 * options.external_engine_timeout_s));
    fleet_options.api_key = options.engine.api_key;  // external engines' /server_info needs it
    fleet_ = std::make_unique<launch::EngineFleet>(options.launch, std::move(fleet_options));
    fleet_->start();
    rollout_model_ = fleet_->plan().rollout_model;
    auto engine_options = options.engine;
    engine_options.worker_urls = fleet_->urls(rollout_model_);
    engine_options.router_url = fleet_->router_url();
    api_key_ = engine_options.api_key;
    engine_ = std::make_unique<engine::VllmEngine>(std::move(engine_options));
    if (transport_ == launch::WeightTransport::kDisk) {
      if (!options.disk_dir) {
        throw UsageError(
            "--update-weight-transport disk needs --update-weight-disk-dir DIR (a directory the "
            "engines can read)");
      }
      weight_sync::DiskSyncOptions o;
      o.dir = *options.disk_dir;
      o.keep_files = options.keep_disk_files;
      o.timeout_s = timeout_s_;
      o.api_key = api_key_;
      if (auto hook = plugin::load_hook_if_set<PluginKind::kUpdateWeightPostWrite>(
              args, "custom_update_weight_post_write_path")) {
        o.post_write = [hook, &args](const std::string& dir, const std::vector<std::string>& urls) {
          hook(args, dir, urls);
        };
      }
      disk_ = std::make_unique<weight_sync::DiskWeightSender>(std::move(o));
    } else {
      nccl_options_.device = model.device();
      nccl_options_.packed = options.packed;
      nccl_options_.packed_buffer_size_bytes = options.packed_buffer_size_bytes;
      nccl_options_.timeout_s = timeout_s_;
      nccl_options_.api_key = api_key_;
      nccl_ = std::make_unique<weight_sync::NcclWeightSender>();
    }
    if (weight_targets().empty()) {
      console_ << "vime train: no engine takes the trainer's weights (no --vllm-config model has "
                  "update_weights: true); rollouts generate with "
               << (rollout_model_.empty() ? "the engines' own" : rollout_model_ + "'s own")
               << " weights throughout\n";
    }
    // slime updates the engines before the first rollout: they start from --hf-checkpoint, the
    // trainer may have loaded other weights (--load, --ref-load).
    update_weights(model, version);
    if (options.use_fault_tolerance) {
      auto health = options.health;
      health.api_key = api_key_;
      monitor_ = std::make_unique<launch::HealthMonitor>(
          std::move(health),
          [this] {
            std::lock_guard<std::mutex> lock(mutex_);
            return fleet_->urls();
          },
          [this](const std::string& url, const std::string& why) { recover(url, why); });
    }
  }

  ~VllmBackend() override {
    monitor_.reset();  // no recovery while shutting down
    for (const auto& w : engine_->stats().workers) {
      console_ << "vime train: engine " << w.url << ": " << w.served << " requests";
      if (w.failures > 0) console_ << " (" << w.failures << " failed and retried)";
      console_ << "\n";
    }
    engine_.reset();
    fleet_->finish(std::uncaught_exceptions() == 0);
  }

  EngineClient& engine() override { return *engine_; }

  void before_train() override {
    if (!sleep_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    post_all(engine_->workers(), "/sleep?level=1", timeout_s_, api_key_);
    asleep_ = true;
  }

  void update_weights(Model& model, int64_t version) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string tag = std::to_string(version);
    const auto urls = weight_targets();
    // Tensor parallel: the group's other ranks gather the shards with this one (senders call
    // Model::hf_tensors once per update).
    if (!announce_weight_gather(model, !urls.empty())) return;
    engine_->pause("keep");
    if (asleep_) post_all(urls, "/wake_up?tags=weights", timeout_s_, api_key_);
    if (disk_) {
      with_engine_logs([&] { disk_->send(model, urls, version); });
    } else {
      if (!nccl_->connected() || nccl_urls_ != urls) {
        connect_nccl(urls);
        nccl_urls_ = urls;
      }
      weight_sync::SendStats stats;
      with_engine_logs([&] { stats = nccl_->send(model, tag); });
      std::ostringstream line;  // its own stream: std::fixed must not stick to the console
      line << "vime train: weights v" << tag << " to " << urls.size()
           << " engine(s): " << std::fixed << std::setprecision(2) << double(stats.bytes) / 1e9
           << " GB in " << stats.seconds << " s (" << stats.gb_per_s() << " GB/s)\n";
      console_ << line.str();
    }
    post_all(urls, "/reset_prefix_cache?reset_running_requests=true", timeout_s_, api_key_);
    if (asleep_) post_all(urls, "/wake_up?tags=kv_cache", timeout_s_, api_key_);
    asleep_ = false;
    for (const auto& u : waiting_for_weights_)
      if (fleet_->model_of(u) == rollout_model_) engine_->add_worker(u);
    waiting_for_weights_.clear();
    engine_->set_weight_version(tag);
    engine_->resume();
  }

  Json model_urls() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return fleet_->describe_models();
  }

  std::string describe() const override {
    std::string text =
        "vLLM engines (" + std::string(launch::to_string(transport_)) + " weight sync):";
    for (const auto& url : engine_->workers()) text += " " + url;
    if (!fleet_->router_url().empty()) text += " via router " + fleet_->router_url();
    const auto models = fleet_->models();
    if (models.size() > 1) {
      text += "; model " + rollout_model_ + " generates, also serving";
      for (const auto& m : models)
        if (m != rollout_model_)
          text += " " + m + " (" + std::to_string(fleet_->urls(m).size()) + ")";
    }
    return text;
  }

 private:
  // The engines that take the trainer's weights (caller holds mutex_): every engine of the fleet
  // whose model has update_weights, the rollout engines restarted and not yet back in the balancer
  // included.
  std::vector<std::string> weight_targets() const {
    std::vector<std::string> urls;
    for (const auto& u : fleet_->urls())
      if (fleet_->updates_weights(u)) urls.push_back(u);
    return urls;
  }

  // vLLM's unique-id rendezvous first (no store; ~v0.30+); servers that refuse it get the
  // TCPStore rendezvous every version since v0.16 speaks.
  // Runs one step of a weight update; an error that names launched engines (their URLs) gets
  // their log files added, so its one line says which engine, which step and where to look.
  template <class F>
  void with_engine_logs(F step) {
    try {
      step();
    } catch (const Error& e) {
      const std::string logs = fleet_->logs_named_in(e.what());
      if (logs.empty()) throw;
      throw Error(e.what() + logs);
    }
  }

  void connect_nccl(const std::vector<std::string>& urls) {
    if (nccl_options_.use_unique_id) {
      try {
        nccl_->connect(urls, nccl_options_);
        return;
      } catch (const Error& e) {
        console_ << "vime train: NCCL unique-id rendezvous failed (" << e.what()
                 << fleet_->logs_named_in(e.what()) << "); retrying with vLLM's TCPStore rendezvous"
                 << std::endl;
      }
      nccl_options_.use_unique_id = false;
    }
    with_engine_logs([&] { nccl_->connect(urls, nccl_options_); });
  }

  // A failed health check (monitor thread): out of the balancer, restarted (or waited for, when
  // external), brought to the current weights, back in.
  void recover(const std::string& url, const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto urls = fleet_->urls();
    const auto it = std::find(urls.begin(), urls.end(), url);
    if (it == urls.end() || fleet_->process(static_cast<size_t>(it - urls.begin())) == nullptr) {
      // An external engine: vime cannot restart it. VllmEngine keeps retrying its requests on the
      // others and avoids it while it fails.
      if (reported_external_.insert(url).second) {
        console_ << "vime train: external engine " << url << " failed its health check (" << why
                 << "); its requests go to the other engines until it answers again\n";
      }
      return;
    }
    reported_external_.erase(url);
    const bool rollout_engine = fleet_->model_of(url) == rollout_model_;
    const bool takes_weights = fleet_->updates_weights(url);
    if (rollout_engine) engine_->remove_worker(url);
    console_ << "vime train: engine " << url << " failed its health check (" << why
             << "); restarting it" << std::endl;
    const std::string fresh = fleet_->restart(static_cast<size_t>(it - urls.begin()));
    if (!takes_weights) {
      if (rollout_engine) engine_->add_worker(fresh);
      console_ << "vime train: engine " << url << " restarted as " << fresh << "\n";
    } else if (disk_) {
      disk_->catch_up(fresh);
      if (rollout_engine) engine_->add_worker(fresh);
      console_ << "vime train: engine " << url << " restarted as " << fresh << "\n";
    } else {
      // The communicator lost a member: the next update reconnects every engine and sends the
      // weights; the restarted engine serves only from then on.
      nccl_urls_.clear();
      waiting_for_weights_.push_back(fresh);
      console_ << "vime train: engine " << url << " restarted as " << fresh
               << " (serves after the next weight update)\n";
    }
  }

  std::ostream& console_;
  launch::WeightTransport transport_;
  bool sleep_;
  double timeout_s_;
  std::string api_key_;       // --vllm-api-key: every call to the engines carries it
  mutable std::mutex mutex_;  // one weight update or recovery at a time
  bool asleep_ = false;
  std::unique_ptr<launch::EngineFleet> fleet_;
  std::string rollout_model_;  // the --vllm-config model rollouts use ("" without a config)
  std::unique_ptr<engine::VllmEngine> engine_;
  std::unique_ptr<weight_sync::DiskWeightSender> disk_;
  std::unique_ptr<weight_sync::NcclWeightSender> nccl_;
  weight_sync::NcclSenderOptions nccl_options_;
  std::vector<std::string> nccl_urls_;
  std::vector<std::string> waiting_for_weights_;
  std::set<std::string> reported_external_;
  std::unique_ptr<launch::HealthMonitor> monitor_;
};

}  // namespace

std::unique_ptr<RolloutBackend> make_vllm_backend(const Args& args, Model& model, int64_t version,
                                                  std::ostream& console) {
  return std::make_unique<VllmBackend>(args, VllmBackendOptions::from(args), model, version,
                                       console);
}

}  // namespace vime::loop
