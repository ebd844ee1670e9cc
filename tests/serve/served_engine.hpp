// A NativeEngine behind an in-process `vime serve` Server on a free 127.0.0.1 port, over the tiny
// engine model and the real Qwen3 tokenizer: the fixture of the serve tests and of VllmEngine's
// tests against real servers.
#pragma once

#include <string>

#include "engine/engine_fixtures.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/serve/server.hpp"

namespace vime::test {

// One model for every served engine of the test binary (float32, CPU).
inline Model& served_model() {
  static auto model = tiny_engine_model(at::kFloat, at::kCPU);
  return *model;
}

inline const Tokenizer& served_tokenizer() { return real_tokenizer("qwen3"); }

struct ServedEngine {
  explicit ServedEngine(const std::string& api_key = "", const std::string& tool_call_parser = "")
      : engine(served_model(), &served_tokenizer(), {}),
        server(engine, served_model(), served_tokenizer(), options(api_key, tool_call_parser)) {
    port = server.start();
  }
  static serve::ServeOptions options(const std::string& api_key,
                                     const std::string& tool_call_parser = "") {
    serve::ServeOptions o;
    o.port = 0;
    o.api_key = api_key;
    o.tool_call_parser = tool_call_parser;
    o.model_name = "tiny-qwen3";
    o.max_model_len = 1024;
    return o;
  }
  std::string url() const { return server.url(); }

  engine::NativeEngine engine;
  serve::Server server;
  int port = 0;
};

}  // namespace vime::test
