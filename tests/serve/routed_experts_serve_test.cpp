// `vime serve --enable-return-routed-experts` over real HTTP on a micro Qwen3-MoE: each
// /inference/v1/generate answer carries choices[0].routed_experts as vLLM returns them (base64
// .npy of shape (tokens - 1, layers, topk)), equal to the engine's own record, and VllmEngine reads
// them back into GenerateResponse::routed_experts; without the flag a request asks with
// "return_routed_experts": true, as slime's SGLang payload does.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <httplib.h>

#include <catch2/catch.hpp>

#include "serve/served_engine.hpp"
#include "support/micro_moe.hpp"
#include "vime/core/base64.hpp"
#include "vime/engine/routed_experts.hpp"
#include "vime/engine/vllm_engine.hpp"
#include "vime/engine/vllm_protocol.hpp"

namespace {

struct MoeServer {
  explicit MoeServer(bool return_routed)
      : model(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, 3),
        engine(model, nullptr, {}),
        server(engine, model, vime::test::served_tokenizer(), options(return_routed)) {
    port = server.start();
  }
  static vime::serve::ServeOptions options(bool return_routed) {
    vime::serve::ServeOptions o;
    o.port = 0;
    o.model_name = "micro-moe";
    o.enable_return_routed_experts = return_routed;
    return o;
  }
  vime::Json generate(const vime::Json& body) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    auto res = c.Post("/inference/v1/generate", body.dump(), "application/json");
    REQUIRE(res);
    CAPTURE(res->body);
    REQUIRE(res->status == 200);
    return vime::Json::parse(res->body);
  }
  vime::Model model;
  vime::engine::NativeEngine engine;
  vime::serve::Server server;
  int port = 0;
};

const std::vector<int32_t> kPrompt{4, 8, 15, 16, 23, 35};

vime::Json body(bool ask) {
  vime::Json b = vime::Json::Object{
      {"token_ids", kPrompt},
      {"sampling_params",
       vime::Json::Object{{"max_tokens", 7}, {"temperature", 1.0}, {"seed", 9}, {"logprobs", 0}}}};
  if (ask) b["return_routed_experts"] = true;
  return b;
}

}  // namespace

TEST_CASE("serve: routed_experts round-trip as base64 .npy into VllmEngine", "[serve]") {
  MoeServer s(true);
  auto direct_request = vime::test::make_request(kPrompt, 7, 1.0, 9);
  direct_request.return_routed_experts = true;
  const auto direct = s.engine.generate(direct_request);
  REQUIRE(direct.routed_experts.size() == (kPrompt.size() + 7 - 1) * 2 * 2);

  const vime::Json answer = s.generate(body(false));
  const vime::Json& routed = answer.at("choices").at(size_t{0}).at("routed_experts");
  REQUIRE(routed.is_string());
  const auto npy = vime::base64_decode(routed.as_string(), "test");
  CHECK(npy.find("'descr': '<i4'") != std::string::npos);
  CHECK(npy.find("'shape': (12, 2, 2)") != std::string::npos);
  const auto parsed = vime::engine::parse_generate_response(answer, "test");
  CHECK(parsed.output_ids == direct.output_ids);
  CHECK(parsed.routed_experts == direct.routed_experts);

  // VllmEngine over the same server (the rollout's HTTP backend).
  vime::engine::VllmEngineOptions o;
  o.worker_urls = {s.server.url()};
  o.model_name = "micro-moe";
  vime::engine::VllmEngine client(o);
  const auto over_http = client.generate(direct_request);
  CHECK(over_http.output_ids == direct.output_ids);
  CHECK(over_http.routed_experts == direct.routed_experts);
}

TEST_CASE("serve: without --enable-return-routed-experts a request asks for them", "[serve]") {
  MoeServer s(false);
  CHECK(s.generate(body(false)).at("choices").at(size_t{0}).at("routed_experts").is_null());
  const auto asked = vime::engine::parse_generate_response(s.generate(body(true)), "test");
  CHECK(asked.routed_experts.size() == (kPrompt.size() + 7 - 1) * 2 * 2);
}
