// The request-body parsers of `vime serve` without a server (serve/request_body.hpp): what each
// route accepts, and the one-line 400 for what it does not. Torch-free: the sanitizer build runs
// it too (tests/sanitize).
#include "vime/serve/request_body.hpp"

#include <catch2/catch.hpp>

#include "tokenizer/tokenizer_fixtures.hpp"

using vime::Json;
using vime::serve::BadRequest;

namespace {

const vime::Tokenizer& qwen3() { return vime::test::real_tokenizer("qwen3"); }

}  // namespace

TEST_CASE("request bodies: completion prompts as text, ids or a list of either", "[serve_body]") {
  using vime::serve::completion_prompts;
  const auto& tok = qwen3();
  auto prompts = completion_prompts(tok, 0, vime::serve::parse_body(R"({"prompt": "1+1="})"));
  REQUIRE(prompts.size() == 1);
  CHECK(prompts[0] == tok.encode("1+1=", true));
  prompts = completion_prompts(tok, 0, Json::parse(R"({"prompt": [[1, 2], "x", [3]]})"));
  REQUIRE(prompts.size() == 3);
  CHECK(prompts[2] == std::vector<int32_t>{3});
  CHECK_THROWS_AS(completion_prompts(tok, 0, Json::parse(R"({"prompt": [[1], {}]})")), BadRequest);
  CHECK_THROWS_WITH(completion_prompts(tok, 0, Json::parse(R"({"prompt": [-1]})")),
                    Catch::Contains("not a token id in [0, "));
  CHECK_THROWS_WITH(completion_prompts(tok, 0, Json::parse(R"({"prompt": []})")),
                    Catch::Contains("prompt must be a string"));
  // A text that cannot fit the context is refused before it is tokenized.
  const std::string big(64 << 10, 'a');
  CHECK_THROWS_WITH(completion_prompts(tok, 16, Json::Object{{"prompt", big}}),
                    Catch::Contains("maximum context length is 16 tokens"));
  CHECK_THROWS_WITH(vime::serve::parse_body("[1]"), Catch::Contains("must be a JSON object"));
  CHECK_THROWS_AS(vime::serve::parse_body("{"), BadRequest);
}

TEST_CASE("request bodies: chat messages rendered by the chat template", "[serve_body]") {
  using vime::serve::chat_prompt;
  const auto& tok = qwen3();
  const auto ids = chat_prompt(
      tok, 0,
      Json::parse(
          R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})"));
  CHECK(tok.decode(ids) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  CHECK_THROWS_WITH(chat_prompt(tok, 0, Json::parse(R"({"messages": [{"role": "bot"}]})")),
                    Catch::Contains("messages[0].role 'bot' is not one of"));
  CHECK_THROWS_WITH(
      chat_prompt(
          tok, 0,
          Json::parse(R"({"messages": [{"role": "user", "content": [{"type": "image"}]}]})")),
      Catch::Contains("only 'text'"));
  CHECK_THROWS_WITH(
      chat_prompt(tok, 0, Json::parse(R"({"messages": [{"role": "user", "content": "a"}],
                                     "continue_final_message": true, "add_generation_prompt": true})")),
      Catch::Contains("cannot both be true"));
}

TEST_CASE("request bodies: sampling fields are validated", "[serve_body]") {
  using vime::serve::sampling_params_from;
  const auto p = sampling_params_from(Json::parse(
      R"({"max_tokens": 4, "top_k": 0, "stop": "x", "stop_token_ids": [7], "seed": 3})"));
  CHECK(p.max_new_tokens == 4);
  CHECK(p.top_k == -1);
  CHECK(p.stop == std::vector<std::string>{"x"});
  CHECK(p.stop_token_ids == std::vector<int32_t>{7});
  CHECK(vime::serve::params_of_choice(p, 2).seed == 5);
  for (const char* bad : {R"({"max_tokens": 0})", R"({"temperature": -1})", R"({"top_p": 0})",
                          R"({"top_k": -2})", R"({"min_tokens": 5, "max_tokens": 4})",
                          R"({"stop": [1]})", R"({"max_tokens": "4"})", R"({"logprobs": -2})"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(sampling_params_from(Json::parse(bad)), BadRequest);
  }
  CHECK_THROWS_WITH(vime::serve::choices_per_prompt(Json::parse(R"({"n": 129})")),
                    Catch::Contains("n must be an integer in [1, 128]"));
}

TEST_CASE("request bodies: prompt_logprobs as vLLM takes it", "[serve_body]") {
  using vime::serve::prompt_logprobs_from;
  CHECK_FALSE(prompt_logprobs_from(Json::parse("{}")).has_value());
  CHECK_FALSE(prompt_logprobs_from(Json::parse(R"({"prompt_logprobs": null})"), true));
  CHECK(prompt_logprobs_from(Json::parse(R"({"prompt_logprobs": 0})")) == 0);
  CHECK(prompt_logprobs_from(Json::parse(R"({"prompt_logprobs": 20})")) == 20);
  for (const char* bad : {R"({"prompt_logprobs": -1})", R"({"prompt_logprobs": 21})",
                          R"({"prompt_logprobs": "1"})", R"({"prompt_logprobs": true})"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(prompt_logprobs_from(Json::parse(bad)),
                      Catch::Contains("prompt_logprobs must be an integer in [0, 20]"));
  }
  CHECK_THROWS_WITH(prompt_logprobs_from(Json::parse(R"({"prompt_logprobs": 1})"), true),
                    Catch::Contains("not available when `stream=True`"));
}
