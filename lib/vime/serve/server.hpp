// `vime serve`: the NativeEngine behind the subset of vLLM's HTTP API that vime's own vLLM backend
// uses (/v1/completions, /inference/v1/generate, /tokenize, /pause, /metrics, ...) and
// /v1/chat/completions (stream=true too), so any OpenAI client, or vime's VllmEngine, can talk to a
// vime checkpoint. Requests are served by a
// thread pool and batched by the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "vime/json.hpp"
#include "vime/tokenizer.hpp"

namespace vime {
class Model;
}
namespace vime::engine {
class NativeEngine;
}

namespace vime::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;      // 0: any free port
  std::string api_key;  // non-empty: every route but /health needs "Bearer <key>"
  std::string model_name = "vime";
  int64_t max_model_len = 0;       // reported by /v1/models and /tokenize
  int threads = 64;                // HTTP worker threads (each blocks on one generation)
  bool enable_sleep_mode = false;  // vLLM's --enable-sleep-mode: /sleep and /wake_up work
  // vLLM's --enable-return-routed-experts: /inference/v1/generate answers carry each token's
  // routed experts (an MoE model; a request can also ask with "return_routed_experts": true).
  bool enable_return_routed_experts = false;
  Json weight_transfer_config = nullptr;  // --weight-transfer-config {"backend": "nccl"|"disk"}
  std::string model_dir;  // the served HF dir: /collective_rpc reload_weights without a path
  // --enable-auto-tool-choice --tool-call-parser hermes: chat answers carry tool_calls.
  std::string tool_call_parser;
  // --max-request-bytes: a larger body is answered 413 unread (0: no limit). 32 MiB: the largest
  // legitimate bodies are prompts as token ids (a 128K-token prompt is ~0.9 MB of JSON: ~35 fit)
  // and /update_weights' tensor metadata (under 1 MB for thousands of tensors).
  int64_t max_request_bytes = int64_t(32) << 20;
};

struct ServeContext;

class Server {
 public:
  // `engine`, the `model` it runs and `tokenizer` must outlive the server. Sleep and weight
  // updates change `model`'s parameters in place while the engine is paused.
  Server(engine::NativeEngine& engine, Model& model, const Tokenizer& tokenizer,
         ServeOptions options);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: a free one) and serves on a background thread; returns the port.
  // Throws vime::Error when the address cannot be bound.
  int start();
  // Aborts in-flight generations (they answer with finish_reason "abort"), stops listening and
  // joins the serving thread. Idempotent.
  void stop();
  int port() const { return port_; }
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace vime::serve
