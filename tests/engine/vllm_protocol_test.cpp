// vLLM's generation wire format: vLLM's request/response examples of /v1/completions and
// /inference/v1/generate (verbatim, // annotations stripped), and the field names of built bodies.
#include "vime/engine/vllm_protocol.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "vime/error.hpp"

using vime::GenerateRequest;
using vime::Json;
using namespace vime::engine;

namespace {

// The /v1/completions response.
constexpr const char* kCompletionsResponse = R"({
  "id": "cmpl-...", "object": "text_completion", "created": 1790000000,
  "model": "Qwen/Qwen3-8B",
  "choices": [{
    "index": 0,
    "text": "2+2=4<|im_end|>",
    "logprobs": {
      "text_offset": [0, 11, 22, 33, 44, 55],
      "token_logprobs": [-0.012, -0.21, -0.0003, -0.05, -0.001, -0.0002],
      "tokens": ["token_id:17", "token_id:10", "token_id:17", "token_id:28", "token_id:19", "token_id:151645"],
      "top_logprobs": [{"token_id:17": -0.012}, {"token_id:10": -0.21}, {"token_id:17": -0.0003},
                       {"token_id:28": -0.05}, {"token_id:19": -0.001}, {"token_id:151645": -0.0002}]
    },
    "finish_reason": "stop",
    "stop_reason": null,
    "token_ids": [17, 10, 17, 28, 19, 151645],
    "prompt_token_ids": [151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198],
    "prompt_logprobs": null
  }],
  "usage": {"prompt_tokens": 15, "completion_tokens": 6, "total_tokens": 21,
            "prompt_tokens_details": {"cached_tokens": 0}},
  "system_fingerprint": null, "kv_transfer_params": null
})";

// The /inference/v1/generate response, with the "...one entry per token_ids
// element..." annotation written out.
std::string generate_response(const std::string& finish, int cached) {
  return R"({
  "request_id": "...",
  "choices": [{
    "index": 0,
    "finish_reason": ")" +
         finish + R"(",
    "token_ids": [17, 10, 17, 28, 19, 151645],
    "logprobs": {"content": [
       {"token": "token_id:17", "logprob": -0.012, "bytes": null,
        "top_logprobs": [{"token": "token_id:17", "logprob": -0.012, "bytes": null}]},
       {"token": "token_id:10", "logprob": -0.21, "bytes": null, "top_logprobs": []},
       {"token": "token_id:17", "logprob": -0.0003, "bytes": null, "top_logprobs": []},
       {"token": "token_id:28", "logprob": -0.05, "bytes": null, "top_logprobs": []},
       {"token": "token_id:19", "logprob": -0.001, "bytes": null, "top_logprobs": []},
       {"token": "token_id:151645", "logprob": -0.0002, "bytes": null, "top_logprobs": []}
    ]},
    "routed_experts": null
  }],
  "usage": {"prompt_tokens": 15, "completion_tokens": 6, "total_tokens": 21,
            "prompt_tokens_details": {"cached_tokens": )" +
         std::to_string(cached) + R"(}},
  "prompt_logprobs": null,
  "kv_transfer_params": null
})";
}

const std::vector<int32_t> kIds = {17, 10, 17, 28, 19, 151645};
const std::vector<float> kLogprobs = {-0.012f, -0.21f, -0.0003f, -0.05f, -0.001f, -0.0002f};

std::set<std::string> keys_of(const Json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.as_object()) keys.insert(key);
  return keys;
}

GenerateRequest spec_request() {
  GenerateRequest r;
  r.input_ids = {151644, 872, 198, 3838};
  r.sampling_params.max_new_tokens = 1024;
  r.sampling_params.temperature = 1.0;
  r.sampling_params.stop_token_ids = {151645};
  r.sampling_params.stop = {"</answer>"};
  r.sampling_params.seed = 1234;
  r.sampling_params.min_new_tokens = 2;
  r.sampling_params.no_stop_trim = true;
  return r;
}

}  // namespace

TEST_CASE("vllm_protocol: vLLM's /v1/completions example parses", "[vllm_engine]") {
  const auto r = parse_generate_response(Json::parse(kCompletionsResponse), "test");
  CHECK(r.output_ids == kIds);
  REQUIRE(r.output_log_probs.size() == kIds.size());
  for (size_t i = 0; i < kIds.size(); ++i) CHECK(r.output_log_probs[i] == Approx(kLogprobs[i]));
  CHECK(r.finish_reason == "stop");
  CHECK(r.prompt_tokens == 15);
  CHECK(r.cached_tokens == 0);
  CHECK(r.weight_version.empty());
}

TEST_CASE("vllm_protocol: vLLM's /inference/v1/generate example parses", "[vllm_engine]") {
  const auto r = parse_generate_response(Json::parse(generate_response("length", 8)), "test");
  CHECK(r.output_ids == kIds);
  REQUIRE(r.output_log_probs.size() == kIds.size());
  for (size_t i = 0; i < kIds.size(); ++i) CHECK(r.output_log_probs[i] == Approx(kLogprobs[i]));
  CHECK(r.finish_reason == "length");
  CHECK(r.prompt_tokens == 15);
  CHECK(r.cached_tokens == 8);
}

TEST_CASE("vllm_protocol: finish reasons map as vime maps them", "[vllm_engine]") {
  auto finish = [](const std::string& reason) {
    return parse_generate_response(Json::parse(generate_response(reason, 0)), "t").finish_reason;
  };
  CHECK(finish("stop") == "stop");
  CHECK(finish("length") == "length");
  CHECK(finish("abort") == "abort");
  CHECK(finish("cancelled") == "abort");
  CHECK(finish("error") == "error");
  CHECK(finish("repetition") == "stop");
  CHECK(map_finish_reason(Json()) == "stop");
}

TEST_CASE("vllm_protocol: log-probs are padded with NaN / truncated to the token count",
          "[vllm_engine]") {
  Json body = Json::parse(generate_response("stop", 0));
  Json choice = body.at("choices").at(size_t{0});
  Json content = Json::array();
  content.push_back(Json::Object{{"logprob", -0.5}});
  content.push_back(Json::Object{{"logprob", nullptr}});
  choice["logprobs"] = Json::Object{{"content", content}};
  body["choices"] = Json::Array{choice};
  body["weight_version"] = 17;
  auto r = parse_generate_response(body, "t");
  REQUIRE(r.output_log_probs.size() == 6);
  CHECK(r.output_log_probs[0] == -0.5f);
  for (size_t i = 1; i < 6; ++i) CHECK(std::isnan(r.output_log_probs[i]));
  CHECK(r.weight_version == "17");

  choice["token_ids"] = Json::Array{17};
  choice["weight_version"] = "v3";
  body = Json::Object{{"choices", Json::Array{choice}}};
  r = parse_generate_response(body, "t");
  CHECK(r.output_ids == std::vector<int32_t>{17});
  CHECK(r.output_log_probs == std::vector<float>{-0.5f});
  CHECK(r.weight_version == "v3");
}

TEST_CASE("vllm_protocol: ids come from token_id labels when token_ids is missing",
          "[vllm_engine]") {
  Json body = Json::parse(kCompletionsResponse);
  Json choice = body.at("choices").at(size_t{0});
  choice.as_object().erase("token_ids");
  body["choices"] = Json::Array{choice};
  CHECK(parse_generate_response(body, "t").output_ids == kIds);
}

TEST_CASE("vllm_protocol: a body of another shape is an Error naming where", "[vllm_engine]") {
  CHECK_THROWS_WITH(parse_generate_response(Json::parse(R"({"choices": []})"), "http://w/x"),
                    Catch::StartsWith("http://w/x: not a vLLM generation response"));
  CHECK_THROWS_AS(parse_generate_response(Json::parse(R"({"id": 1})"), "w"), vime::Error);
  CHECK_THROWS_AS(parse_generate_response(Json::parse(R"({"choices": [{"token_ids": "x"}]})"), "w"),
                  vime::Error);
}

TEST_CASE("vllm_protocol: /inference/v1/generate body carries vLLM's field names",
          "[vllm_engine]") {
  GenerateRequest r = spec_request();
  r.sampling_params.extra = Json::Object{{"min_p", 0.05}, {"top_k", 20}};
  const Json body = generate_body(r, "Qwen/Qwen3-8B");
  CHECK(keys_of(body) == std::set<std::string>{"model", "token_ids", "sampling_params"});
  CHECK(body.at("model").as_string() == "Qwen/Qwen3-8B");
  CHECK(body.at("token_ids") == Json(std::vector<int32_t>{151644, 872, 198, 3838}));
  const Json& sp = body.at("sampling_params");
  CHECK(keys_of(sp) == std::set<std::string>{"max_tokens", "min_tokens", "temperature", "top_p",
                                             "top_k", "stop", "stop_token_ids",
                                             "skip_special_tokens", "include_stop_str_in_output",
                                             "spaces_between_special_tokens", "repetition_penalty",
                                             "seed", "logprobs", "min_p"});
  CHECK(sp.at("max_tokens").as_int() == 1024);
  CHECK(sp.at("min_tokens").as_int() == 2);
  CHECK(sp.at("top_k").as_int() == 20);  // extra wins
  CHECK(sp.at("min_p").as_double() == 0.05);
  CHECK(sp.at("seed").as_int() == 1234);
  CHECK(sp.at("logprobs").as_int() == 0);
  CHECK(sp.at("include_stop_str_in_output").as_bool());
  CHECK(sp.at("stop") == Json(std::vector<std::string>{"</answer>"}));
  CHECK(sp.at("stop_token_ids") == Json(std::vector<int32_t>{151645}));

  r.return_logprob = false;
  r.sampling_params.seed.reset();
  r.sampling_params.extra = Json::object();
  const Json plain = generate_body(r, "");
  CHECK_FALSE(plain.contains("model"));
  CHECK_FALSE(plain.at("sampling_params").contains("logprobs"));
  CHECK_FALSE(plain.at("sampling_params").contains("seed"));
}

TEST_CASE("vllm_protocol: /v1/completions body asks for ids back", "[vllm_engine]") {
  const Json body = completions_body(spec_request(), "m");
  CHECK(keys_of(body) ==
        std::set<std::string>{"model", "prompt", "max_tokens", "min_tokens", "temperature", "top_p",
                              "top_k", "stop", "stop_token_ids", "skip_special_tokens",
                              "include_stop_str_in_output", "spaces_between_special_tokens",
                              "repetition_penalty", "seed", "logprobs", "return_token_ids",
                              "return_tokens_as_token_ids"});
  CHECK(body.at("prompt") == Json(std::vector<int32_t>{151644, 872, 198, 3838}));
  CHECK(body.at("logprobs").as_int() == 0);
  CHECK(body.at("return_token_ids").as_bool());
  CHECK(body.at("return_tokens_as_token_ids").as_bool());
}

TEST_CASE("vllm_protocol: error messages of both vLLM error shapes", "[vllm_engine]") {
  CHECK(vllm_error_message(Json::parse(
            R"({"error": {"message": "bad max_tokens", "type": "BadRequestError",
                "param": null, "code": 400}})")) == "bad max_tokens");
  CHECK(vllm_error_message(Json::parse(
            R"({"object": "error", "message": "old style", "type": "invalid_request_error",
                "param": null, "code": 400})")) == "old style");
  CHECK(vllm_error_message(Json::parse(R"({"error": "Unauthorized"})")) == "Unauthorized");
  CHECK(vllm_error_message(Json::parse(R"({"detail": "Not Found"})")) == "Not Found");
  CHECK(vllm_error_message(Json::parse(R"({"choices": []})")).empty());
}
