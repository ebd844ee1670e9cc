// Stand-ins for the launch tests:
//   engine <model> --host H --port P ...   a vLLM stand-in: GET /health (after
//       $LAUNCH_HELPER_DELAY_MS), GET /info -> {"argv": [...], "cuda": $CUDA_VISIBLE_DEVICES}.
//       Model "FAIL" prints an error and exits 3.
//   router --host H --port P ...           a vllm-router stand-in: GET /health, POST /workers,
//       GET /workers, DELETE /workers/<encoded url>.
//   spawn <pidfile> <wait|exit|throw|segv> <parent-death-signal> <cmd...>   starts cmd through
//       vime::launch::ChildProcess, writes its pid to pidfile, then waits for a signal, calls
//       std::exit(0), throws an uncaught exception or crashes.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vime/launch/child_process.hpp"

namespace {

std::string flag(const std::vector<std::string>& args, const std::string& name,
                 const std::string& fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == name) return args[i + 1];
  }
  return fallback;
}

// Minimal JSON writing and reading, so that this helper does not link libvime (LibTorch's start-up
// would cost most of a second per process).
std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += quote(items[i]);
  }
  return out + "]";
}

// The string value of "key" in a flat JSON object written without escapes.
std::string string_field(const std::string& json, const std::string& key) {
  const size_t k = json.find(quote(key));
  const size_t start = json.find('"', json.find(':', k) + 1) + 1;
  return json.substr(start, json.find('"', start) - start);
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

int serve_engine(const std::vector<std::string>& args) {
  if (args.size() > 2 && args[2] == "FAIL") {
    std::fprintf(stderr, "stand-in engine: cannot load model FAIL\n");
    return 3;
  }
  const char* delay = std::getenv("LAUNCH_HELPER_DELAY_MS");
  const auto healthy_at =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(delay ? std::atoi(delay) : 0);
  httplib::Server server;
  server.Get("/health", [&](const httplib::Request&, httplib::Response& res) {
    res.status = std::chrono::steady_clock::now() >= healthy_at ? 200 : 503;
  });
  server.Get("/info", [&](const httplib::Request&, httplib::Response& res) {
    const char* cuda = std::getenv("CUDA_VISIBLE_DEVICES");
    res.set_content(
        R"({"argv":)" + string_list(args) + R"(,"cuda":)" + (cuda ? quote(cuda) : "null") + "}",
        "application/json");
  });
  server.Get("/server_info", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"vllm_config":{"parallel_config":{"data_parallel_size":1}}})",
                    "application/json");
  });
  // --port 0 as `vime serve` takes it: any free port, reported once bound.
  const std::string host = flag(args, "--host", "127.0.0.1");
  const int wanted = std::stoi(flag(args, "--port", "0"));
  const int port = wanted == 0 ? server.bind_to_any_port(host)
                               : (server.bind_to_port(host, wanted) ? wanted : -1);
  if (port <= 0) return 4;
  std::printf("stand-in engine at http://%s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  return server.listen_after_bind() ? 0 : 4;
}

int serve_router(const std::vector<std::string>& args) {
  httplib::Server server;
  std::mutex mutex;
  std::vector<std::string> workers;
  // --worker-urls U...: the workers it starts with, as the real router takes them.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--worker-urls") continue;
    for (size_t j = i + 1; j < args.size() && !args[j].starts_with("--"); ++j)
      workers.push_back(args[j]);
  }
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server.Post("/workers", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    workers.push_back(string_field(req.body, "url"));
    res.set_content(R"({"success":true,"message":"added","worker":null})", "application/json");
  });
  server.Get("/workers", [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(mutex);
    std::string list;
    for (const auto& w : workers) {
      if (!list.empty()) list += ',';
      list += R"({"url":)" + quote(w) + "}";
    }
    res.set_content(R"({"workers":[)" + list + "]}", "application/json");
  });
  server.Delete(R"(/workers/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    const std::string url = url_decode(req.matches[1].str());
    std::erase(workers, url);
    res.set_content(R"({"success":true})", "application/json");
  });
  // The flags vime passed, for the test to check.
  server.Get("/argv", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(string_list(args), "application/json");
  });
  return server.listen(flag(args, "--host", "127.0.0.1"), std::stoi(flag(args, "--port", "0"))) ? 0
                                                                                                : 4;
}

int spawn(const std::vector<std::string>& args) {
  const std::string pidfile = args.at(2), mode = args.at(3);
  vime::launch::ChildSpec spec;
  spec.name = "grandchild";
  spec.parent_death_signal = std::stoi(args.at(4));
  spec.argv.assign(args.begin() + 5, args.end());
  auto* child = new vime::launch::ChildProcess(spec);  // leaked: only the exit paths clean up
  { std::ofstream(pidfile + ".tmp") << child->pid() << "\n"; }
  std::rename((pidfile + ".tmp").c_str(), pidfile.c_str());
  if (mode == "exit") std::exit(0);
  if (mode == "throw") throw std::runtime_error("uncaught on purpose");
  if (mode == "segv") ::raise(SIGSEGV);
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() < 2) return 2;
  if (args[1] == "engine") return serve_engine(args);
  if (args[1] == "router") return serve_router(args);
  if (args[1] == "spawn") return spawn(args);
  return 2;
}
