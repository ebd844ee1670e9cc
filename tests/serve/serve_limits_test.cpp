// [serve_limits] What one request may make `vime serve` do, checked before the work: a body over
// --max-request-bytes is answered 413 without being kept, a chunked body (size unknown) 411, and a
// text prompt whose bytes cannot fit the context 400 without being tokenized; each in vLLM's error
// shape.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "serve/served_engine.hpp"
#include "vime/json.hpp"

using vime::Json;

namespace {

struct Limited {
  explicit Limited(int64_t max_request_bytes)
      : engine(vime::test::served_model(), &vime::test::served_tokenizer(), {}),
        server(engine, vime::test::served_model(), vime::test::served_tokenizer(),
               options(max_request_bytes)) {
    server.start();
  }
  static vime::serve::ServeOptions options(int64_t max_request_bytes) {
    auto o = vime::test::ServedEngine::options("");
    o.max_request_bytes = max_request_bytes;
    return o;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(120);
    c.set_write_timeout(120);
    return c;
  }
  vime::engine::NativeEngine engine;
  vime::serve::Server server;
};

// The body is {"error": {"message", "type", "param", "code": status}}; returns the message.
std::string vllm_error(const httplib::Result& r, int status) {
  REQUIRE(r);
  CHECK(r->status == status);
  const Json body = Json::parse(r->body);
  const Json& e = body.at("error");
  CHECK(e.at("code").as_int() == status);
  CHECK(e.at("type").is_string());
  return e.at("message").as_string();
}

}  // namespace

TEST_CASE("serve_limits: a body over --max-request-bytes is 413; one at the limit is served",
          "[serve_limits]") {
  const int64_t limit = 64 << 10;
  Limited s(limit);
  auto c = s.client();
  std::string over = R"({"prompt": "1+1=", "max_tokens": 1})";
  over.resize(static_cast<size_t>(limit + 1), ' ');  // JSON allows trailing blanks
  CHECK_THAT(vllm_error(c.Post("/v1/completions", over, "application/json"), 413),
             Catch::Contains("--max-request-bytes 65536") && Catch::Contains("65537 bytes"));
  std::string at_limit = over.substr(0, static_cast<size_t>(limit));
  auto ok = c.Post("/v1/completions", at_limit, "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  // The connection that was refused serves the next request normally.
  CHECK(c.Get("/health")->status == 200);
}

TEST_CASE("serve_limits: a chunked body is 411 (its size is unknown up front)", "[serve_limits]") {
  Limited s(1 << 20);
  auto c = s.client();
  auto r = c.Post(
      "/v1/completions",
      [](size_t offset, httplib::DataSink& sink) {
        if (offset == 0) {
          const std::string body = R"({"prompt": "1+1=", "max_tokens": 1})";
          sink.write(body.data(), body.size());
        }
        sink.done();
        return true;
      },
      "application/json");
  CHECK_THAT(vllm_error(r, 411), Catch::Contains("Content-Length"));
}

TEST_CASE("serve_limits: a prompt that cannot fit the context is 400 before it is tokenized",
          "[serve_limits]") {
  Limited s(int64_t(64) << 20);
  auto c = s.client();
  // 24 MB of text (millions of tokens): tokenizing it would take tens of seconds and gigabytes.
  Json body = Json::object();
  body["prompt"] = std::string(24 << 20, 'x');
  body["max_tokens"] = 1;
  const std::string text = body.dump();
  const auto start = std::chrono::steady_clock::now();
  const std::string message = vllm_error(c.Post("/v1/completions", text, "application/json"), 400);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  // Refused by its bytes (the engine's own check, after tokenizing, words it differently).
  CHECK_THAT(message, Catch::Contains("maximum context length is 1024 tokens") &&
                          Catch::Contains("(25165824 bytes) holds at least"));
  Json chat = Json::object();
  chat["messages"] =
      Json(Json::Array{Json::Object{{"role", "user"}, {"content", std::string(8 << 20, 'y')}}});
  CHECK_THAT(vllm_error(c.Post("/v1/chat/completions", chat.dump(), "application/json"), 400),
             Catch::Contains("maximum context length"));
  // A prompt that may fit is tokenized and checked as before (the engine's own context check).
  Json fits = Json::object();
  fits["prompt"] = "1+1=";
  fits["max_tokens"] = 1;
  auto ok = c.Post("/v1/completions", fits.dump(), "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
}
