// vLLM's hermes tool-call parser as vime serve runs it (--enable-auto-tool-choice
// --tool-call-parser hermes): the parser on the outputs Qwen3 and Hermes templates produce, and the
// chat route's wiring (tool_choice, the message shape, the streamed form).
#include "vime/serve/tool_calls.hpp"

#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <httplib.h>

#include <catch2/catch.hpp>

#include "serve/served_engine.hpp"
#include "support/test_support.hpp"

using vime::Json;
using vime::serve::parse_hermes_tool_calls;

TEST_CASE("tool calls: hermes blocks become OpenAI tool_calls", "[serve_chat]") {
  const auto one = parse_hermes_tool_calls(
      "<think>\nweather first\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\", \"days\": 2}}\n</tool_call>",
      "chatcmpl-tool-x-0-");
  REQUIRE(one.called());
  CHECK(one.content.as_string() == "<think>\nweather first\n</think>\n\n");
  const Json& call = one.tool_calls.at(size_t{0});
  CHECK(call.at("id").as_string() == "chatcmpl-tool-x-0-0");
  CHECK(call.at("type").as_string() == "function");
  CHECK(call.at("function").at("name").as_string() == "get_weather");
  // arguments is a JSON string, as OpenAI clients json.loads it.
  CHECK(Json::parse(call.at("function").at("arguments").as_string()) ==
        Json::parse(R"({"city": "Paris", "days": 2})"));

  // Two calls, no text before them: content is null; string arguments stay as given.
  const auto two = parse_hermes_tool_calls(
      "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", "
      "\"arguments\": \"{\\\"q\\\": 1}\"}</tool_call>",
      "t-");
  REQUIRE(two.tool_calls.size() == 2);
  CHECK(two.content.is_null());
  CHECK(two.tool_calls.at(size_t{1}).at("id").as_string() == "t-1");
  CHECK(two.tool_calls.at(size_t{1}).at("function").at("arguments").as_string() == R"({"q": 1})");
  CHECK(two.tool_calls.at(size_t{0}).at("function").at("arguments").as_string() == "{}");

  // A call cut off by max_tokens after its JSON still counts; one cut inside its JSON does not.
  CHECK(parse_hermes_tool_calls("<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n", "t-")
            .called());
  const std::string cut = "ok <tool_call>\n{\"name\": \"a\", \"argum";
  const auto partial = parse_hermes_tool_calls(cut, "t-");
  CHECK_FALSE(partial.called());
  CHECK(partial.content.as_string() == cut);

  // Not a call: no name, or not JSON. The text stands as it is.
  for (const std::string text : {"<tool_call>{\"arguments\": {}}</tool_call>",
                                 "<tool_call>call a()</tool_call>", "plain answer"}) {
    const auto out = parse_hermes_tool_calls(text, "t-");
    CHECK_FALSE(out.called());
    CHECK(out.content.as_string() == text);
  }
  CHECK(parse_hermes_tool_calls("", "t-").content.is_null());
}

namespace {

const Json kTools = Json::Array{Json::Object{
    {"type", "function"},
    {"function", Json::Object{{"name", "get_weather"},
                              {"description", "Weather of a city"},
                              {"parameters", Json::Object{{"type", "object"},
                                                          {"properties", Json::object()}}}}}}};

Json chat_body() {
  return Json::Object{{"messages", Json::Array{Json::Object{{"role", "user"}, {"content", "Hi"}}}},
                      {"tools", kTools},
                      {"max_tokens", 6},
                      {"temperature", 0.0}};
}

httplib::Result post(int port, const Json& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  return c.Post("/v1/chat/completions", body.dump(), "application/json");
}

}  // namespace

TEST_CASE("tool calls: the chat route parses with the server's parser, streamed or not",
          "[serve_chat]") {
  vime::test::ServedEngine plain;
  vime::test::ServedEngine parsing("", "hermes");
  // The tiny random model writes no <tool_call>: with or without the parser the text is the same,
  // and the parsed answer keeps it as content with no calls.
  auto a = post(plain.port, chat_body()), b = post(parsing.port, chat_body());
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(b->status == 200);
  const Json pa = Json::parse(a->body).at("choices").at(size_t{0});
  const Json pb = Json::parse(b->body).at("choices").at(size_t{0});
  CHECK(pb.at("message").at("content") == pa.at("message").at("content"));
  CHECK(pb.at("message").at("tool_calls").size() == 0);
  CHECK(pb.at("finish_reason") == pa.at("finish_reason"));

  // Streamed with the parser: one content delta carrying the role, one finish chunk, usage, [DONE].
  Json streamed = chat_body();
  streamed["stream"] = true;
  streamed["stream_options"] = Json::Object{{"include_usage", true}};
  auto s = post(parsing.port, streamed);
  REQUIRE(s);
  REQUIRE(s->status == 200);
  CHECK(s->get_header_value("Content-Type").rfind("text/event-stream", 0) == 0);
  std::vector<Json> chunks;
  size_t at = 0;
  while (true) {
    const size_t end = s->body.find("\n\n", at);
    REQUIRE(end != std::string::npos);
    const std::string event = s->body.substr(at + 6, end - at - 6);
    at = end + 2;
    if (event == "[DONE]") break;
    chunks.push_back(Json::parse(event));
  }
  CHECK(at == s->body.size());
  REQUIRE(chunks.size() == 3);
  const Json& delta = chunks[0].at("choices").at(size_t{0}).at("delta");
  CHECK(delta.at("role").as_string() == "assistant");
  CHECK(delta.at("content") == pa.at("message").at("content"));
  CHECK(chunks[1].at("choices").at(size_t{0}).at("finish_reason") == pa.at("finish_reason"));
  CHECK(chunks[2].at("usage").at("completion_tokens").as_int() == 6);

  // tool_choice: "none" leaves the text alone; forcing a function needs guided decoding.
  Json none = chat_body();
  none["tool_choice"] = "none";
  auto n = post(parsing.port, none);
  REQUIRE(n);
  CHECK(n->status == 200);
  Json required = chat_body();
  required["tool_choice"] = "required";
  auto r = post(parsing.port, required);
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK_THAT(r->body, Catch::Contains("tool_choice"));
}
