// `vime serve` over real HTTP on 127.0.0.1: the in-process Server around a NativeEngine on a tiny
// CPU model with the real Qwen3 tokenizer (vLLM's response shapes, outputs equal to the
// engine's own, concurrency, pause/abort, api key, errors, /metrics). The binary:
// serve_binary_test.cpp.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "serve/served_engine.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/json.hpp"
#include "vime/serve/server.hpp"

using vime::Json;
using vime::engine::NativeEngine;

namespace {

vime::Model& shared_model() { return vime::test::served_model(); }
const vime::Tokenizer& qwen() { return vime::test::served_tokenizer(); }

// An engine and a server on a free port, with a client for it.
struct Served : vime::test::ServedEngine {
  using ServedEngine::ServedEngine;
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    return c;
  }
};

Json post(const Served& s, const std::string& path, const Json& body, int expect = 200) {
  auto res = s.client().Post(path.c_str(), body.dump(), "application/json");
  CAPTURE(httplib::to_string(res.error()));
  REQUIRE(res);
  CAPTURE(path, res->body);
  REQUIRE(res->status == expect);
  return Json::parse(res->body);
}

Json get(const Served& s, const std::string& path, int expect = 200) {
  auto res = s.client().Get(path.c_str());
  REQUIRE(res);
  CAPTURE(path, res->body);
  REQUIRE(res->status == expect);
  return Json::parse(res->body);
}

std::vector<int32_t> ids_of(const Json& array) {
  std::vector<int32_t> out;
  for (const auto& v : array.as_array()) out.push_back(static_cast<int32_t>(v.as_int()));
  return out;
}

std::vector<int32_t> prompt_of(const std::string& text) { return qwen().encode(text); }

void wait_until(const std::function<bool()>& done) {
  for (int i = 0; i < 4000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(done());
}

}  // namespace

TEST_CASE("serve: logprobs=N on /v1/completions returns N alternatives per position", "[serve]") {
  Served s;
  const auto prompt = prompt_of("The capital of France is");
  Json body =
      Json::Object{{"prompt", prompt}, {"max_tokens", 5}, {"temperature", 0.7},
                   {"seed", 3},        {"logprobs", 4},   {"return_tokens_as_token_ids", true}};
  const Json r = post(s, "/v1/completions", body);
  const Json& lp = r.at("choices").at(size_t{0}).at("logprobs");
  REQUIRE(lp.at("tokens").size() == 5);
  auto request = vime::test::make_request(prompt, 5, 0.7, 3);
  vime::engine::TopLogProbs expected{4, {}};
  s.engine.generate(request, &expected);
  REQUIRE(expected.positions.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    const Json& top = lp.at("top_logprobs").at(i);
    const auto& alternatives = expected.positions[i];
    REQUIRE(alternatives.size() == 4);
    // The 4 most likely tokens, plus the sampled one when it is not among them (vLLM's rule).
    const std::string sampled = lp.at("tokens").at(i).as_string();
    bool sampled_in_top = false;
    for (size_t j = 0; j < 4; ++j) {
      const std::string label = "token_id:" + std::to_string(alternatives[j].token_id);
      sampled_in_top |= label == sampled;
      CHECK(top.at(label).as_double() == Approx(alternatives[j].log_prob).margin(1e-5));
      if (j > 0) CHECK(alternatives[j].log_prob <= alternatives[j - 1].log_prob);
    }
    CHECK(top.size() == (sampled_in_top ? 4u : 5u));
    CHECK(top.at(sampled).as_double() == lp.at("token_logprobs").at(i).as_double());
  }
  body["logprobs"] = 21;
  post(s, "/v1/completions", body, 400);
  body["logprobs"] = 2;
  body["stream"] = true;
  post(s, "/v1/completions", body, 400);
}

TEST_CASE("serve: /v1/completions greedy output equals the engine's, in vLLM's shape", "[serve]") {
  Served s;
  const auto prompt = prompt_of("The capital of France is");
  Json body = Json::Object{{"model", "tiny-qwen3"},
                           {"prompt", prompt},
                           {"max_tokens", 8},
                           {"temperature", 0.0},
                           {"logprobs", 0},
                           {"return_token_ids", true},
                           {"return_tokens_as_token_ids", true},
                           {"n", 1}};
  const Json r = post(s, "/v1/completions", body);
  const auto expected = s.engine.generate(vime::test::make_request(prompt, 8));
  CHECK(r.at("object").as_string() == "text_completion");
  CHECK(r.at("id").as_string().rfind("cmpl-", 0) == 0);
  CHECK(r.at("model").as_string() == "tiny-qwen3");
  CHECK(r.at("system_fingerprint").is_null());
  REQUIRE(r.at("choices").size() == 1);
  const Json& c = r.at("choices").at(size_t{0});
  CHECK(c.at("index").as_int() == 0);
  CHECK(c.at("finish_reason").as_string() == "length");
  CHECK(c.at("stop_reason").is_null());
  CHECK(ids_of(c.at("token_ids")) == expected.output_ids);
  CHECK(ids_of(c.at("prompt_token_ids")) == prompt);
  CHECK(c.at("text").as_string() == qwen().decode(expected.output_ids, true));
  const Json& lp = c.at("logprobs");
  REQUIRE(lp.at("token_logprobs").size() == 8);
  int64_t offset = 0;
  for (size_t i = 0; i < 8; ++i) {
    const std::string label = "token_id:" + std::to_string(expected.output_ids[i]);
    CHECK(lp.at("tokens").at(i).as_string() == label);
    CHECK(lp.at("token_logprobs").at(i).as_double() ==
          Approx(expected.output_log_probs[i]).margin(1e-5));
    CHECK(lp.at("top_logprobs").at(i).at(label).as_double() ==
          Approx(expected.output_log_probs[i]).margin(1e-5));
    CHECK(lp.at("text_offset").at(i).as_int() == offset);
    offset += static_cast<int64_t>(label.size());
  }
  const Json& usage = r.at("usage");
  CHECK(usage.at("prompt_tokens").as_int() == static_cast<int64_t>(prompt.size()));
  CHECK(usage.at("completion_tokens").as_int() == 8);
  CHECK(usage.at("total_tokens").as_int() == static_cast<int64_t>(prompt.size()) + 8);
  CHECK(usage.at("prompt_tokens_details").at("cached_tokens").as_int() == 0);

  SECTION("text prompts, batches of prompts, stop ids and logprobs off") {
    Json batch = Json::Object{{"prompt", Json::Array{Json("1 + 1 ="), Json(prompt)}},
                              {"max_tokens", 6},
                              {"temperature", 0.0}};
    const Json b = post(s, "/v1/completions", batch);
    REQUIRE(b.at("choices").size() == 2);
    CHECK(b.at("choices").at(size_t{1}).at("index").as_int() == 1);
    CHECK(b.at("choices").at(size_t{0}).at("logprobs").is_null());
    const auto first = s.engine.generate(vime::test::make_request(prompt_of("1 + 1 ="), 6));
    CHECK(b.at("choices").at(size_t{0}).at("text").as_string() ==
          qwen().decode(first.output_ids, true));
    // A stop id at the second generated token ends the choice there with stop_reason = the id.
    Json stop = body;
    stop["stop_token_ids"] = Json::Array{Json(static_cast<int64_t>(expected.output_ids[1]))};
    const Json st = post(s, "/v1/completions", stop).at("choices").at(size_t{0});
    CHECK(st.at("finish_reason").as_string() == "stop");
    CHECK(st.at("stop_reason").as_int() == expected.output_ids[1]);
    CHECK(ids_of(st.at("token_ids")) ==
          std::vector<int32_t>(expected.output_ids.begin(), expected.output_ids.begin() + 2));
  }
}

TEST_CASE("serve: stop strings end a completion and are trimmed unless included", "[serve]") {
  Served s;
  const auto prompt = prompt_of("Translate to German: good morning");
  const auto greedy = s.engine.generate(vime::test::make_request(prompt, 8)).output_ids;
  const std::string stop = qwen().decode(std::vector<int32_t>{greedy[3]});
  CAPTURE(stop, qwen().decode(greedy));
  REQUIRE(!stop.empty());
  Json body = Json::Object{{"prompt", prompt},
                           {"max_tokens", 8},
                           {"temperature", 0.0},
                           {"stop", stop},
                           {"skip_special_tokens", false}};
  const Json trimmed = post(s, "/v1/completions", body).at("choices").at(size_t{0});
  CHECK(trimmed.at("finish_reason").as_string() == "stop");
  CHECK(trimmed.at("stop_reason").as_string() == stop);
  CHECK(trimmed.at("text").as_string().find(stop) == std::string::npos);
  body["include_stop_str_in_output"] = true;
  const Json kept = post(s, "/v1/completions", body).at("choices").at(size_t{0});
  const std::string text = kept.at("text").as_string();
  CHECK(text.find(stop) != std::string::npos);
  CHECK(text.rfind(trimmed.at("text").as_string(), 0) == 0);
}

TEST_CASE("serve: /inference/v1/generate answers tokens and chat-format logprobs", "[serve]") {
  Served s;
  const auto prompt = prompt_of("def fibonacci(n):");
  Json body = Json::Object{{"request_id", "step1-p0-s0"},
                           {"token_ids", prompt},
                           {"sampling_params", Json::Object{{"max_tokens", 6},
                                                            {"temperature", 0.0},
                                                            {"top_k", 0},
                                                            {"logprobs", 0},
                                                            {"skip_special_tokens", false},
                                                            {"include_stop_str_in_output", true}}}};
  const Json r = post(s, "/inference/v1/generate", body);
  const auto expected = s.engine.generate(vime::test::make_request(prompt, 6));
  CHECK(r.at("request_id").as_string() == "step1-p0-s0");
  CHECK(r.at("prompt_logprobs").is_null());
  const Json& c = r.at("choices").at(size_t{0});
  CHECK(c.at("finish_reason").as_string() == "length");
  CHECK(c.at("routed_experts").is_null());
  CHECK(ids_of(c.at("token_ids")) == expected.output_ids);
  const Json& content = c.at("logprobs").at("content");
  REQUIRE(content.size() == expected.output_ids.size());
  for (size_t i = 0; i < content.size(); ++i) {
    CHECK(content.at(i).at("token").as_string() ==
          "token_id:" + std::to_string(expected.output_ids[i]));
    CHECK(content.at(i).at("logprob").as_double() ==
          Approx(expected.output_log_probs[i]).margin(1e-5));
    CHECK(content.at(i).at("bytes").is_null());
    CHECK(content.at(i).at("top_logprobs").size() == 1);
  }
  CHECK(r.at("usage").at("completion_tokens").as_int() == 6);
}

TEST_CASE("serve: tokenize, detokenize, models, health and the control plane", "[serve]") {
  Served s;
  const Json t =
      post(s, "/tokenize", Json::Object{{"prompt", "hello world"}, {"return_token_strs", true}});
  CHECK(ids_of(t.at("tokens")) == qwen().encode("hello world", true));
  CHECK(t.at("count").as_int() == static_cast<int64_t>(t.at("tokens").size()));
  CHECK(t.at("max_model_len").as_int() == 1024);
  CHECK(t.at("token_strs").size() == t.at("tokens").size());
  Json messages = Json::Array{Json::Object{{"role", "user"}, {"content", "What is 2+2?"}}};
  const Json chat = post(s, "/tokenize", Json::Object{{"messages", messages}});
  CHECK(ids_of(chat.at("tokens")) ==
        qwen().encode(qwen().apply_chat_template(messages, nullptr, true, Json::object())));
  CHECK(chat.at("token_strs").is_null());
  const Json d = post(s, "/detokenize", Json::Object{{"tokens", qwen().encode("2+2")}});
  CHECK(d.at("prompt").as_string() == "2+2");

  auto health = s.client().Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(health->body.empty());
  const Json models = get(s, "/v1/models");
  CHECK(models.at("object").as_string() == "list");
  const Json& m = models.at("data").at(size_t{0});
  CHECK(m.at("id").as_string() == "tiny-qwen3");
  CHECK(m.at("object").as_string() == "model");
  CHECK(m.at("owned_by").as_string() == "vllm");
  CHECK(m.at("max_model_len").as_int() == 1024);
  CHECK(get(s, "/get_world_size").at("world_size").as_int() == 1);
  CHECK(get(s, "/is_paused").at("is_paused").as_bool() == false);
  CHECK(post(s, "/pause?mode=keep", Json::object()).at("status").as_string() == "paused");
  CHECK(get(s, "/is_paused").at("is_paused").as_bool() == true);
  CHECK(post(s, "/resume", Json::object()).at("status").as_string() == "resumed");
  CHECK(get(s, "/is_paused").at("is_paused").as_bool() == false);
  CHECK(post(s, "/pause?mode=sideways", Json::object(), 400).contains("error"));
  auto reset = s.client().Post("/reset_prefix_cache", "", "application/json");
  REQUIRE(reset);
  CHECK(reset->status == 200);
  CHECK(get(s, "/no/such/route", 404).at("detail").as_string() == "Not Found");
}

TEST_CASE("serve: 16 concurrent requests each get the engine's own greedy output", "[serve]") {
  Served s;
  // Catch's macros are not thread-safe: the threads only talk HTTP; checks run here.
  std::vector<std::future<httplib::Result>> replies;
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 16; ++i) prompts.push_back(prompt_of("Count to " + std::to_string(i) + ":"));
  for (int i = 0; i < 16; ++i) {
    const std::string body = Json(Json::Object{{"prompt", prompts[i]},
                                               {"max_tokens", 10},
                                               {"temperature", 0.0},
                                               {"return_token_ids", true}})
                                 .dump();
    replies.push_back(std::async(std::launch::async, [&s, body] {
      return s.client().Post("/v1/completions", body, "application/json");
    }));
  }
  for (int i = 0; i < 16; ++i) {
    const httplib::Result res = replies[i].get();
    CAPTURE(i);
    REQUIRE(res);
    REQUIRE(res->status == 200);
    const Json r = Json::parse(res->body);
    CHECK(ids_of(r.at("choices").at(size_t{0}).at("token_ids")) ==
          vime::test::greedy_reference(shared_model(), prompts[i], 10));
  }
  CHECK(s.engine.stats().requests_finished == 16);
}

TEST_CASE("serve: pause?mode=abort ends in-flight requests with finish_reason abort", "[serve]") {
  Served s;
  auto pending = std::async(std::launch::async, [&] {
    return post(s, "/inference/v1/generate",
                Json::Object{{"token_ids", prompt_of("Once upon a time")},
                             {"sampling_params", Json::Object{{"max_tokens", 900},
                                                              {"temperature", 0.0},
                                                              {"ignore_eos", true}}}});
  });
  wait_until([&] { return s.engine.stats().running == 1; });
  CHECK(post(s, "/pause?mode=abort", Json::object()).at("status").as_string() == "paused");
  const Json r = pending.get();
  const Json& c = r.at("choices").at(size_t{0});
  CHECK(c.at("finish_reason").as_string() == "abort");
  CHECK(c.at("token_ids").size() < 900);
  CHECK(c.at("logprobs").is_null());
  CHECK(get(s, "/is_paused").at("is_paused").as_bool());
  post(s, "/resume", Json::object());
  const Json after =
      post(s, "/v1/completions", Json::Object{{"prompt", prompt_of("1 + 1 =")}, {"max_tokens", 3}});
  CHECK(after.at("choices").at(size_t{0}).at("finish_reason").as_string() == "length");
}

TEST_CASE("serve: /abort_requests with no ids aborts everything in flight", "[serve]") {
  Served s;
  auto pending = std::async(std::launch::async, [&] {
    return post(
        s, "/v1/completions",
        Json::Object{
            {"prompt", prompt_of("Once upon a time")}, {"max_tokens", 900}, {"ignore_eos", true}});
  });
  wait_until([&] { return s.engine.stats().running == 1; });
  const Json a = post(s, "/abort_requests", Json::Object{{"request_ids", Json::array()}});
  CHECK(a.at("status").as_string() == "aborted");
  CHECK(a.at("aborted").as_int() == 1);
  CHECK(pending.get().at("choices").at(size_t{0}).at("finish_reason").as_string() == "abort");
  post(s, "/abort_requests", Json::Object{{"request_ids", Json::Array{Json("x")}}}, 400);
}

TEST_CASE("serve: --api-key needs the bearer token on every route but /health", "[serve]") {
  Served s("sesame");
  auto c = s.client();
  auto health = c.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  for (const char* path : {"/v1/models", "/metrics", "/is_paused"}) {
    auto r = c.Get(path);
    REQUIRE(r);
    CHECK(r->status == 401);
    CHECK(Json::parse(r->body).at("error").as_string() == "Unauthorized");
  }
  auto bad = c.Post("/v1/completions", R"({"prompt":"hi","max_tokens":1})", "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 401);
  httplib::Headers wrong{{"Authorization", "Bearer nope"}};
  auto w = c.Get("/v1/models", wrong);
  REQUIRE(w);
  CHECK(w->status == 401);
  httplib::Headers auth{{"Authorization", "Bearer sesame"}};
  auto ok =
      c.Post("/v1/completions", auth, R"({"prompt":"hi","max_tokens":2})", "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(Json::parse(ok->body).at("usage").at("completion_tokens").as_int() == 2);
}

TEST_CASE("serve: bad JSON and bad fields are 400 with vLLM's error body", "[serve]") {
  Served s;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/v1/completions", "{not json"},
      {"/v1/completions", "[1, 2]"},
      {"/v1/completions", R"({"max_tokens": 3})"},
      {"/v1/completions", R"({"prompt": [1, 2], "n": 0})"},
      {"/v1/completions", R"({"prompt": [1, 2], "n": 2, "stream": true})"},
      {"/inference/v1/generate", R"({"token_ids": [5], "sampling_params": {"n": 2}})"},
      {"/v1/completions", R"({"prompt": [1, -2]})"},
      {"/v1/completions", R"({"prompt": [1, 99999999]})"},
      {"/v1/completions", R"({"prompt": [1, 2], "max_tokens": "many"})"},
      {"/v1/completions", R"({"prompt": [1, 2], "top_p": 0})"},
      {"/v1/completions", R"({"prompt": [[1, 2], [3]], "stream": true})"},
      {"/v1/completions", R"({"prompt": [1, 2], "stream_options": {"include_usage": true}})"},
      {"/inference/v1/generate", R"({"sampling_params": {}})"},
      {"/inference/v1/generate", R"({"token_ids": [], "sampling_params": {}})"},
      {"/inference/v1/generate", R"({"token_ids": [5], "sampling_params": {"temperature": -1}})"},
      {"/tokenize", R"({"prompt": 5})"},
      {"/detokenize", R"({"tokens": "abc"})"},
  };
  for (const auto& [path, body] : cases) {
    CAPTURE(path, body);
    auto r = s.client().Post(path.c_str(), body, "application/json");
    REQUIRE(r);
    CHECK(r->status == 400);
    const Json e = Json::parse(r->body).at("error");
    CHECK(e.at("type").as_string() == "BadRequestError");
    CHECK(e.at("code").as_int() == 400);
    CHECK(!e.at("message").as_string().empty());
    CHECK(e.at("param").is_null());
  }
}

TEST_CASE("serve: n choices per prompt, numbered prompt by prompt; seeded ones repeat", "[serve]") {
  Served s;
  const auto p1 = prompt_of("1 + 1 ="), p2 = prompt_of("The sky is");
  const Json body = Json::Object{{"prompt", Json::Array{Json(p1), Json(p2)}},
                                 {"n", 3},
                                 {"max_tokens", 8},
                                 {"temperature", 1.0},
                                 {"seed", 7},
                                 {"return_token_ids", true}};
  const Json out = post(s, "/v1/completions", body);
  const auto& choices = out.at("choices").as_array();
  REQUIRE(choices.size() == 6);
  for (size_t c = 0; c < 6; ++c) CHECK(choices[c].at("index").as_int() == int64_t(c));
  // Seeds 7, 8, 9 per prompt: the three samples of a prompt differ (8 tokens at T=1 over a
  // 151k vocabulary), and a second request gets the same ones.
  CHECK(choices[0].at("text") != choices[1].at("text"));
  CHECK(choices[1].at("text") != choices[2].at("text"));
  CHECK(post(s, "/v1/completions", body).at("choices") == out.at("choices"));
  const Json usage = out.at("usage");
  CHECK(usage.at("prompt_tokens").as_int() == int64_t(p1.size() + p2.size()));  // once per prompt
  int64_t completion = 0;
  for (const auto& c : choices) completion += static_cast<int64_t>(c.at("token_ids").size());
  CHECK(usage.at("completion_tokens").as_int() == completion);
}

TEST_CASE("serve: /metrics counts requests and tokens under vLLM's names", "[serve]") {
  Served s;
  const auto prompt = prompt_of("1 + 1 =");
  for (int i = 0; i < 3; ++i) {
    post(s, "/v1/completions", Json::Object{{"prompt", prompt}, {"max_tokens", 4 + i}});
  }
  // The scheduler drops a finished row after its reply is out: the gauge settles right after.
  wait_until([&] { return s.engine.stats().running == 0; });
  auto r = s.client().Get("/metrics");
  REQUIRE(r);
  CHECK(r->status == 200);
  const std::string labels = "{model_name=\"tiny-qwen3\",engine=\"0\"";
  CHECK_THAT(r->body, Catch::Contains("vllm:generation_tokens_total" + labels + "} 15\n"));
  CHECK_THAT(r->body, Catch::Contains("vllm:prompt_tokens_total" + labels + "} " +
                                      std::to_string(3 * prompt.size()) + "\n"));
  CHECK_THAT(r->body, Catch::Contains("vllm:request_success_total" + labels +
                                      ",finished_reason=\"length\"} 3\n"));
  CHECK_THAT(r->body, Catch::Contains("vllm:num_requests_running" + labels + "} 0\n"));
  CHECK_THAT(r->body, Catch::Contains("# TYPE vllm:generation_tokens_total counter"));
}

TEST_CASE("serve: stop() ends requests held by a pause with finish_reason abort", "[serve]") {
  Served s;
  CHECK(post(s, "/pause?mode=keep", Json::object()).at("status").as_string() == "paused");
  auto pending = std::async(std::launch::async, [&] {
    return post(s, "/inference/v1/generate",
                Json::Object{{"token_ids", prompt_of("1 + 1 =")},
                             {"sampling_params", Json::Object{{"max_tokens", 5}}}});
  });
  wait_until([&] { return s.engine.stats().queued == 1; });
  s.server.stop();
  const Json r = pending.get();
  CHECK(r.at("choices").at(size_t{0}).at("finish_reason").as_string() == "abort");
  CHECK(r.at("choices").at(size_t{0}).at("token_ids").size() == 0);
  CHECK(!httplib::Client("127.0.0.1", s.port).Get("/health"));  // no longer listening
}
