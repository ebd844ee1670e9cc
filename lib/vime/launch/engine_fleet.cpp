#include "vime/launch/engine_fleet.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <iostream>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/launch/server_info.hpp"

namespace vime::launch {
namespace {

std::string file_name(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

}  // namespace

EngineFleet::EngineFleet(LaunchOptions launch, FleetOptions options)
    : launch_(std::move(launch)),
      options_(std::move(options)),
      plan_(plan_engines(launch_.engines)) {
  if (options_.log_dir.empty()) {
    own_log_dir_ = true;
    options_.log_dir =
        std::filesystem::temp_directory_path() / ("vime-engines-" + std::to_string(::getpid()));
  }
  check_router_flags(launch_.router);  // a bad router flag fails before any engine starts
  engines_.resize(plan_.engines.size());
  for (size_t i = 0; i < plan_.engines.size(); ++i) {
    engines_[i].model = plan_.engines[i].model;
    engines_[i].update_weights = plan_.engines[i].update_weights;
  }
  for (const auto& url : plan_.external_urls) engines_.push_back({url, "", true, nullptr, false});
}

EngineFleet::~EngineFleet() {
  try {
    stop();
  } catch (...) {
  }
}

void EngineFleet::say(const std::string& line) const {
  if (options_.progress) {
    options_.progress(line);
  } else {
    std::cerr << "vime: " << line << "\n";
  }
}

HealthWait EngineFleet::health_wait(const std::string& what) const {
  HealthWait wait;
  wait.timeout = options_.startup_timeout;
  wait.poll_interval = options_.poll_interval;
  wait.progress_interval = options_.progress_interval;
  wait.what = what;
  wait.progress = [this](const std::string& line) { say(line); };
  return wait;
}

void EngineFleet::launch(size_t i) {
  const EngineSpec& spec = plan_.engines[i];
  // Ports handed out moments ago are still free to the kernel: keep them distinct.
  int port = http::free_port(options_.host);
  for (int tries = 0; used_ports_.count(port) != 0 && tries < 20; ++tries) {
    port = http::free_port(options_.host);
  }
  used_ports_.insert(port);
  ChildSpec child;
  child.name = spec.name;
  child.argv = spec.argv(options_.host, port);
  child.env = spec.env;
  child.log_path = options_.log_dir / ("engine-" + file_name(spec.name) + ".log");
  engines_[i].process = std::make_unique<ChildProcess>(child);
  engines_[i].url = http::http_url(options_.host, port);
}

std::string EngineFleet::log_path(const std::string& url) const {
  for (const auto& e : engines_)
    if (e.url == url && e.process) return e.process->spec().log_path.string();
  return "";
}

std::string EngineFleet::logs_named_in(const std::string& text) const {
  std::string logs;
  for (const auto& e : engines_) {
    if (!e.process || e.url.empty() || text.find(e.url) == std::string::npos) continue;
    logs += (logs.empty() ? "" : ", ") + e.url + " logs to " + e.process->spec().log_path.string();
  }
  return logs.empty() ? "" : " (" + logs + ")";
}

Router* EngineFleet::router_of(const std::string& model) const {
  const auto it = routers_.find(model);
  return it == routers_.end() ? nullptr : it->second.get();
}

void EngineFleet::register_engine(size_t i) {
  Router* router = router_of(engines_[i].model);
  if (!router) return;
  router->add_worker(engines_[i].url);
  engines_[i].registered = true;
}

void EngineFleet::deregister_engine(size_t i) {
  Router* router = router_of(engines_[i].model);
  if (!router || !engines_[i].registered) return;
  engines_[i].registered = false;
  try {
    router->remove_worker(engines_[i].url);
  } catch (const Error& e) {
    say(std::string("warning: ") + e.what());
  }
}

// After the engines are healthy. The rollout model's router is the one the flags name (vime
// registers the engines with it) or a launched one; every other model gets a launched one of its
// own when vllm-router is installed, else vime balances its engines. Launched routers start with
// their engines as --worker-urls.
void EngineFleet::start_routers() {
  const std::string& rollout = plan_.rollout_model;
  auto router = make_router(launch_.router, urls(rollout), options_.log_dir / "router.log",
                            health_wait("router"));
  if (!router) return;
  say("vllm-router " + std::string(router->launched() ? "started at " : "at ") + router->url() +
      (rollout.empty() ? "" : " for " + rollout));
  const bool launched = router->launched();
  routers_[rollout] = std::move(router);
  for (size_t i = 0; i < engines_.size(); ++i) {
    if (engines_[i].model != rollout) continue;
    if (launched) {
      engines_[i].registered = true;
    } else {
      register_engine(i);
    }
  }
  const auto command = router_command();
  for (const auto& model : models()) {
    if (model == rollout || !command) continue;
    routers_[model] = std::make_unique<Router>(
        *command, launch_.router, 0, urls(model),
        options_.log_dir / ("router-" + file_name(model) + ".log"), health_wait("router"));
    for (auto& e : engines_) e.registered = e.registered || e.model == model;
    say("vllm-router started at " + routers_[model]->url() + " for " + model);
  }
}

void EngineFleet::start() {
  if (engines_.empty()) {
    throw UsageError(std::string("no vLLM engine to start or use: give ") + kEngineFlagsHint);
  }
  // A missing `vllm` (or router command) fails here, before anything starts.
  check_engine_command(plan_);
  if (!launch_.router.ip) router_command();
  try {
    for (size_t i = 0; i < plan_.engines.size(); ++i) launch(i);
    if (!plan_.engines.empty()) {
      say("started " + std::to_string(plan_.engines.size()) + " engines; logs in " +
          options_.log_dir.string());
    }
    std::vector<HealthTarget> targets;
    for (size_t i = 0; i < engines_.size(); ++i) {
      const std::string name =
          i < plan_.engines.size() ? plan_.engines[i].name : "external engine " + engines_[i].url;
      targets.push_back({name, engines_[i].url, engines_[i].process.get()});
    }
    auto wait = health_wait("engines");
    if (plan_.engines.empty()) wait.timeout = options_.external_timeout;
    wait_healthy(targets, wait);
    EngineExpectations expected;
    expected.weight_transport = to_string(launch_.engines.weight_transport);
    expected.api_key = options_.api_key;
    for (size_t i = plan_.engines.size(); i < engines_.size(); ++i)
      check_external_engine(engines_[i].url, expected);
    start_routers();
  } catch (...) {
    stop();
    throw;
  }
}

std::vector<std::string> EngineFleet::urls() const {
  std::vector<std::string> out;
  for (const auto& e : engines_) out.push_back(e.url);
  return out;
}

std::vector<std::string> EngineFleet::urls(const std::string& model) const {
  std::vector<std::string> out;
  for (const auto& e : engines_)
    if (e.model == model) out.push_back(e.url);
  return out;
}

std::vector<std::string> EngineFleet::models() const {
  std::vector<std::string> out;
  for (const auto& e : engines_)
    if (std::find(out.begin(), out.end(), e.model) == out.end()) out.push_back(e.model);
  return out;
}

std::string EngineFleet::router_url() const { return router_url(plan_.rollout_model); }

std::string EngineFleet::router_url(const std::string& model) const {
  const Router* router = router_of(model);
  return router ? router->url() : "";
}

const std::string& EngineFleet::model_of(const std::string& url) const {
  for (const auto& e : engines_)
    if (e.url == url) return e.model;
  throw Error("no engine at " + url + " in this run");
}

bool EngineFleet::updates_weights(const std::string& url) const {
  for (const auto& e : engines_)
    if (e.url == url) return e.update_weights;
  return false;
}

Json EngineFleet::describe_models() const {
  Json out = Json::object();
  for (const auto& model : models()) {
    Json entry = Json::object();
    Json urls_json = Json::array();
    bool update = false;
    for (const auto& e : engines_) {
      if (e.model != model) continue;
      urls_json.push_back(e.url);
      update = update || e.update_weights;
    }
    entry["engines"] = std::move(urls_json);
    const std::string router = router_url(model);
    entry["router"] = router.empty() ? Json(nullptr) : Json(router);
    entry["update_weights"] = update;
    out[model.empty() ? "default" : model] = std::move(entry);
  }
  return out;
}

ChildProcess* EngineFleet::process(size_t i) {
  return i < engines_.size() ? engines_[i].process.get() : nullptr;
}

std::string EngineFleet::restart(size_t i) {
  if (i >= engines_.size()) {
    throw Error("restart: no engine " + std::to_string(i) + " (there are " +
                std::to_string(engines_.size()) + ")");
  }
  if (i >= plan_.engines.size()) {
    throw Error("restart: engine " + engines_[i].url +
                " is external (--rollout-external-engine-addrs); restart it where it runs");
  }
  restarted_ = true;
  deregister_engine(i);
  if (engines_[i].process) {
    engines_[i].process->terminate(options_.stop_grace);
    say(plan_.engines[i].name + " " + engines_[i].process->describe_exit() + "; restarting it");
  }
  launch(i);
  wait_healthy({{plan_.engines[i].name, engines_[i].url, engines_[i].process.get()}},
               health_wait("engines"));
  register_engine(i);
  return engines_[i].url;
}

void EngineFleet::stop() {
  for (size_t i = 0; i < engines_.size(); ++i) deregister_engine(i);
  std::vector<std::future<void>> stopping;
  for (auto& e : engines_) {
    if (e.process) {
      ChildProcess* p = e.process.get();
      stopping.push_back(
          std::async(std::launch::async, [this, p] { p->terminate(options_.stop_grace); }));
    }
  }
  for (auto& f : stopping) f.get();
  for (auto& [model, router] : routers_) router->stop();
}

void EngineFleet::finish(bool success) {
  stop();
  std::error_code ignored;
  if (success && !restarted_ && own_log_dir_) {
    std::filesystem::remove_all(options_.log_dir, ignored);
  } else if (std::filesystem::exists(options_.log_dir, ignored)) {
    say("engine logs kept in " + options_.log_dir.string());
  }
}

}  // namespace vime::launch
