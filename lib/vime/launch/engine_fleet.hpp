// EngineFleet: the rollout engines of a run, started, health-checked, registered with their model's
// router, restarted and stopped. Engines come from engine_plan (vllm serve / VIME_VLLM_COMMAND) or
// are external (--rollout-external-engine-addrs, used as given). Each model has its own router, as
// slime gives each --sglang-config model one: the rollout model's from make_router (external or
// launched), the other --vllm-config models' launched when vllm-router is installed.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "vime/launch/child_process.hpp"
#include "vime/launch/engine_plan.hpp"
#include "vime/launch/launch_options.hpp"
#include "vime/launch/router.hpp"

namespace vime::launch {

struct FleetOptions {
  std::string host = "127.0.0.1";  // engines listen here; their URLs use it
  // engine-<rank>.log and router.log; empty: <temp dir>/vime-engines-<pid>, removed by a clean
  // finish().
  std::filesystem::path log_dir;
  std::chrono::milliseconds startup_timeout = std::chrono::minutes(30);
  // When every engine is external: they are meant to be up already, so a dead address fails fast.
  std::chrono::milliseconds external_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(500);
  std::chrono::milliseconds progress_interval = std::chrono::seconds(10);
  std::chrono::milliseconds stop_grace = std::chrono::seconds(30);
  // Progress lines ("waiting for 2 engines: 1/2 healthy, 12 s"); nullptr: stderr.
  std::function<void(const std::string&)> progress;
  // The engines' API key (VllmEngineOptions::api_key): external engines are checked with it.
  std::string api_key;
};

class EngineFleet {
 public:
  // Plans the engines (throws UsageError on a layout vime cannot start); starts nothing.
  explicit EngineFleet(LaunchOptions launch, FleetOptions options = {});
  ~EngineFleet();  // stop()
  EngineFleet(const EngineFleet&) = delete;
  EngineFleet& operator=(const EngineFleet&) = delete;

  // Starts the router and all engines at once, waits for every /health, registers them with the
  // router. On failure everything started is stopped and vime::Error says which engine and why;
  // no engine in the plan is a UsageError, a missing engine command an Error naming it.
  void start();
  // Engine URLs: launched engines in rank order, then external ones.
  std::vector<std::string> urls() const;
  // The engines of one model (plan().rollout_model for the rollout engines).
  std::vector<std::string> urls(const std::string& model) const;
  // The models in plan order ("" alone for the default layout and external engines).
  std::vector<std::string> models() const;
  // Where rollouts send requests: the rollout model's router, or "" without one (the caller
  // balances).
  std::string router_url() const;
  std::string router_url(const std::string& model) const;
  // The engine at `url` takes the trainer's weights (its model's update_weights).
  bool updates_weights(const std::string& url) const;
  // The model of the engine at `url` (throws vime::Error for an unknown URL).
  const std::string& model_of(const std::string& url) const;
  // {"<model>": {"engines": [urls], "router": url or null, "update_weights": bool}}, the model
  // "" named "default": what plugins get as args.vllm_model_urls.
  Json describe_models() const;
  const EnginePlan& plan() const { return plan_; }
  // Where the launched engine at `url` writes its log; "" for an external or unknown URL.
  std::string log_path(const std::string& url) const;
  // " (log: <file>)" for every launched engine whose URL `text` names: for errors about engines.
  std::string logs_named_in(const std::string& text) const;
  // The process of launched engine i (nullptr for external ones or before start()).
  ChildProcess* process(size_t i);
  // Restarts launched engine i: deregisters it, kills it if needed, starts it on a new free port,
  // waits for /health and registers it again. Returns its new URL.
  std::string restart(size_t i);
  // Deregisters the engines, terminates them, the router last. Safe to call twice.
  void stop();
  // stop(), then the end of the run: a clean one (`success`, no engine restarted) removes the
  // default log directory; otherwise the logs stay and a line says where.
  void finish(bool success);

 private:
  struct Engine {
    std::string url;
    std::string model;
    bool update_weights = true;
    std::unique_ptr<ChildProcess> process;
    bool registered = false;
  };
  void launch(size_t i);
  void register_engine(size_t i);
  void deregister_engine(size_t i);
  void say(const std::string& line) const;
  HealthWait health_wait(const std::string& what) const;
  void start_routers();
  Router* router_of(const std::string& model) const;

  LaunchOptions launch_;
  FleetOptions options_;
  EnginePlan plan_;
  std::vector<Engine> engines_;                             // launched engines, then external ones
  std::map<std::string, std::unique_ptr<Router>> routers_;  // by model; absent: none
  std::set<int> used_ports_;
  bool own_log_dir_ = false;  // log_dir is vime's temporary default, not the caller's
  bool restarted_ = false;
};

}  // namespace vime::launch
