// vllm-router in front of the engines: one vime launches (`vllm-router` on PATH, or env
// VIME_VLLM_ROUTER_COMMAND) once the engines are healthy, with them as --worker-urls (the Rust
// binary refuses to start without workers), or a running one given by --vllm-router-ip/-port.
// Engines are registered with POST /workers and removed with DELETE /workers/<encoded url>.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vime/launch/child_process.hpp"
#include "vime/launch/health.hpp"
#include "vime/launch/launch_options.hpp"

namespace vime::launch {

class Router {
 public:
  // A running router at `url` (vime does not own it).
  explicit Router(std::string url);
  // Starts `command` + --host 127.0.0.1 --port <port, 0: a free one> --policy ... --worker-urls
  // <workers> and waits for its /health.
  Router(const std::vector<std::string>& command, const RouterOptions& options, int port,
         const std::vector<std::string>& workers, const std::filesystem::path& log_path,
         const HealthWait& wait);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  const std::string& url() const { return url_; }
  bool launched() const { return process_ != nullptr; }
  ChildProcess* process() { return process_.get(); }

  // Throws vime::Error naming the router and the engine when the router refuses it.
  void add_worker(const std::string& engine_url);
  void remove_worker(const std::string& engine_url);
  // Terminates a launched router (no-op for an external one).
  void stop();

 private:
  std::string url_;
  std::unique_ptr<ChildProcess> process_;
};

// The router command line to start: VIME_VLLM_ROUTER_COMMAND (split on spaces), else
// `vllm-router` when it is on PATH; nullopt: none installed.
std::optional<std::vector<std::string>> router_command();

// The argv after the command: --host, --port, --policy, --request-timeout-secs, --router-* flags,
// then --worker-urls when `workers` is not empty.
std::vector<std::string> router_flags(const RouterOptions& options, int port,
                                      const std::vector<std::string>& workers = {});

// Throws UsageError for router flags that cannot work (--vllm-router-ip without a port).
void check_router_flags(const RouterOptions& options);

// From the flags: the external router (--vllm-router-ip and --vllm-router-port; the caller
// registers the engines), a launched one (on --vllm-router-port when only that is given) that
// starts with `workers`, or nullptr when none is installed and none is given (the caller balances).
std::unique_ptr<Router> make_router(const RouterOptions& options,
                                    const std::vector<std::string>& workers,
                                    const std::filesystem::path& log_path, const HealthWait& wait);

}  // namespace vime::launch
