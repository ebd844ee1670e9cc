#include "vime/launch/router.hpp"

#include <cstdlib>

#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"

namespace vime::launch {
namespace {

constexpr double kControlTimeoutS = 120;  // the router checks the worker's /health before adding

}  // namespace

Router::Router(std::string url) : url_(http::normalize_url(url, "vllm-router address")) {}

Router::Router(const std::vector<std::string>& command, const RouterOptions& options, int port,
               const std::vector<std::string>& workers, const std::filesystem::path& log_path,
               const HealthWait& wait) {
  const std::string host = "127.0.0.1";
  if (port == 0) port = http::free_port(host);
  url_ = http::http_url(host, port);
  ChildSpec spec;
  spec.name = "vllm-router";
  spec.argv = command;
  const auto flags = router_flags(options, port, workers);
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.log_path = log_path;
  process_ = std::make_unique<ChildProcess>(spec);
  HealthWait router_wait = wait;
  router_wait.what = "router";
  wait_healthy({{"vllm-router", url_, process_.get()}}, router_wait);
}

Router::~Router() { stop(); }

void Router::add_worker(const std::string& engine_url) {
  Json body = Json::object();
  body["url"] = engine_url;
  body["worker_type"] = "regular";
  const http::Response response =
      http::fetch(http::Request::post_json(url_ + "/workers", body, kControlTimeoutS));
  bool success = false;
  if (response.ok()) {
    try {
      const Json reply = response.json("vllm-router POST /workers");
      const Json* s = reply.find("success");
      success = s != nullptr && s->is_bool() && s->as_bool();
    } catch (const Error&) {
    }
  }
  if (!success) {
    throw Error("vllm-router " + url_ + " refused engine " + engine_url + " (POST /workers): " +
                response.describe() + (response.ok() ? " " + response.body : ""));
  }
}

void Router::remove_worker(const std::string& engine_url) {
  http::Request request;
  request.method = "DELETE";
  request.url = url_ + "/workers/" + http::percent_encode(engine_url);
  request.timeout_s = kControlTimeoutS;
  const http::Response response = http::fetch(request);
  if (!response.ok() && response.status != 404) {
    throw Error("vllm-router " + url_ + " did not remove engine " + engine_url +
                " (DELETE /workers): " + response.describe());
  }
}

void Router::stop() {
  if (process_) process_->terminate();
}

std::optional<std::vector<std::string>> router_command() {
  if (const char* command = std::getenv("VIME_VLLM_ROUTER_COMMAND"); command != nullptr) {
    auto argv = split_command_line(command);
    if (argv.empty()) {
      throw UsageError(
          "VIME_VLLM_ROUTER_COMMAND is set but empty; unset it (vllm-router from PATH) or set a "
          "command line");
    }
    if (!find_program(argv.front())) {
      throw Error("VIME_VLLM_ROUTER_COMMAND=\"" + std::string(command) + "\": '" + argv.front() +
                  "' is not " +
                  (argv.front().find('/') != std::string::npos ? "an executable file" : "on PATH") +
                  "; point it at vllm-router or unset it");
    }
    return argv;
  }
  if (find_program("vllm-router")) return std::vector<std::string>{"vllm-router"};
  return std::nullopt;
}

std::vector<std::string> router_flags(const RouterOptions& options, int port,
                                      const std::vector<std::string>& workers) {
  std::vector<std::string> flags = {"--host", "127.0.0.1", "--port", std::to_string(port)};
  if (options.policy) flags.insert(flags.end(), {"--policy", *options.policy});
  if (options.request_timeout_secs) {
    flags.insert(flags.end(),
                 {"--request-timeout-secs", std::to_string(*options.request_timeout_secs)});
  }
  for (const auto& f : options.router_flags) {
    flags.push_back("--" + f.name.substr(std::string_view("--router-").size()));
    flags.insert(flags.end(), f.values.begin(), f.values.end());
  }
  if (!workers.empty()) {
    flags.push_back("--worker-urls");
    flags.insert(flags.end(), workers.begin(), workers.end());
  }
  return flags;
}

void check_router_flags(const RouterOptions& options) {
  if (options.ip && !options.port) {
    throw UsageError("--vllm-router-ip needs --vllm-router-port (the running router's port)");
  }
}

std::unique_ptr<Router> make_router(const RouterOptions& options,
                                    const std::vector<std::string>& workers,
                                    const std::filesystem::path& log_path, const HealthWait& wait) {
  check_router_flags(options);
  if (options.ip) {
    return std::make_unique<Router>(http::http_url(*options.ip, static_cast<int>(*options.port)));
  }
  const auto command = router_command();
  if (!command) return nullptr;
  const int port = options.port ? static_cast<int>(*options.port) : 0;
  return std::make_unique<Router>(*command, options, port, workers, log_path, wait);
}

}  // namespace vime::launch
