// ChatTemplate as the tokenizer and `vime tokenize chat` use it: where the template comes from,
// the special tokens and kwargs in its context, errors that name the template line, threads.
#include "vime/tokenizer/chat_template.hpp"

#include <catch2/catch.hpp>
#include <future>
#include <vector>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using vime::Json;
using vime::test::TempDir;
using vime::tokenizer::ChatTemplate;
using vime::tokenizer::ChatTemplateError;

namespace {

const Json kMessages = Json::parse(R"([{"role": "user", "content": "Hi"}])");
const char* kEcho =
    "{{ bos_token }}|{% for m in messages %}{{ m.role }}:{{ m.content }}{% endfor %}|{{ "
    "add_generation_prompt }}";

std::string render(const ChatTemplate& t, const Json& kwargs = Json::object()) {
  return t.render(kMessages, Json(), true, kwargs);
}

}  // namespace

TEST_CASE("A template from tokenizer_config.json, with its special tokens in the context",
          "[chat_template]") {
  TempDir dir;
  dir.write(
      "tokenizer_config.json",
      Json(Json::Object{
               {"chat_template", Json(kEcho)},
               {"bos_token", Json(Json::Object{{"content", Json("<s>")}, {"lstrip", Json(false)}})},
               {"eos_token", Json("</s>")},
               {"unk_token", Json()}})
          .dump());
  ChatTemplate t = ChatTemplate::from_directory(dir.path());
  CHECK(render(t) == "<s>|user:Hi|True");
  CHECK(ChatTemplate::from_directory(dir.path()).render(kMessages, Json(), true, Json::object()) ==
        "<s>|user:Hi|True");  // a second load of the same directory
  CHECK(t.render(kMessages, Json(), false, Json::object()) == "<s>|user:Hi|False");
}

TEST_CASE("chat_template.jinja beside tokenizer_config.json wins over the config's template",
          "[chat_template]") {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": "from config", "bos_token": "<B>"})");
  dir.write("chat_template.jinja", "from file {{ bos_token }}\n");
  CHECK(render(ChatTemplate::from_directory(dir.path())) == "from file <B>");
}

TEST_CASE("Named templates: tool_use when tools are given, default otherwise, or the one named",
          "[chat_template]") {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": [
      {"name": "default", "template": "default {{ tools is none }}"},
      {"name": "tool_use", "template": "tool_use {{ tools | length }}"},
      {"name": "rag", "template": "rag {{ documents }}"}]})");
  ChatTemplate t = ChatTemplate::from_directory(dir.path());
  CHECK(t.render(kMessages, Json(), false, Json::object()) == "default True");
  CHECK(t.render(kMessages, Json::parse(R"([{"name": "f"}])"), false, Json::object()) ==
        "tool_use 1");
  CHECK(ChatTemplate::from_directory(dir.path(), "rag")
            .render(kMessages, Json(), false, Json::object()) == "rag None");
  CHECK_THROWS_WITH(ChatTemplate::from_directory(dir.path(), "nope"),
                    Catch::Contains("no chat template named 'nope'"));
}

TEST_CASE("A directory without a chat template is an error naming it", "[chat_template]") {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"bos_token": "<s>"})");
  CHECK_THROWS_WITH(ChatTemplate::from_directory(dir.path()),
                    Catch::Contains(dir.path().string()) && Catch::Contains("chat_template.jinja"));
  dir.write("tokenizer_config.json", R"({"chat_template": 42})");
  CHECK_THROWS_WITH(ChatTemplate::from_directory(dir.path()),
                    Catch::Contains("must be a string or a list"));
  dir.write("tokenizer_config.json", R"({"chat_template": "x", )");
  CHECK_THROWS_AS(ChatTemplate::from_directory(dir.path()), vime::Error);
}

TEST_CASE(
    "kwargs become template variables; messages, tools and add_generation_prompt stay the "
    "arguments",
    "[chat_template]") {
  ChatTemplate t = ChatTemplate::from_string(
      "{{ enable_thinking }} {{ bos_token }} {{ messages | length }} {{ add_generation_prompt }} "
      "{{ custom.k }}",
      Json::parse(R"({"bos_token": "<s>"})"));
  CHECK(render(t, Json::parse(R"({"enable_thinking": false, "custom": {"k": [1, 2.5, null]}})")) ==
        "False <s> 1 True [1, 2.5, None]");
  ChatTemplate plain = ChatTemplate::from_string(
      "{{ bos_token }} {{ messages | length }} {{ add_generation_prompt }}",
      Json::parse(R"({"bos_token": "<s>"})"));
  CHECK(
      render(plain,
             Json::parse(
                 R"({"bos_token": "override", "messages": [], "add_generation_prompt": false})")) ==
      "override 1 True");
  CHECK_THROWS_AS(t.render(kMessages, Json(), true, Json("not an object")), ChatTemplateError);
}

TEST_CASE("Template errors are ChatTemplateError naming the template line", "[chat_template]") {
  CHECK_THROWS_WITH(ChatTemplate::from_string("line 1\n{% if x %}\nline 3\n"),
                    Catch::Contains("line 3") && Catch::Contains("TemplateSyntaxError"));
  ChatTemplate t = ChatTemplate::from_string(
      "{% for m in messages %}\n{% if m.role != 'user' %}\n{{ raise_exception('Only user "
      "messages') }}\n{% endif %}\n{% endfor %}");
  CHECK_THROWS_WITH(t.render(Json::parse(R"([{"role": "system"}])"), Json(), false, Json::object()),
                    Catch::Equals("chat template line 3: TemplateError: Only user messages"));
  CHECK_THROWS_AS(t.render(Json::parse(R"([{"role": "system"}])"), Json(), false, Json::object()),
                  vime::Error);
}

TEST_CASE("render_json keeps key order for tojson; render(Json) sees keys sorted",
          "[chat_template]") {
  ChatTemplate t =
      ChatTemplate::from_string("{% for tool in tools %}{{ tool | tojson }}{% endfor %}");
  const char* tools = R"([{"type": "function", "function": {"name": "f", "description": "d"}}])";
  CHECK(t.render_json("[]", tools, false, "{}") ==
        R"({"type": "function", "function": {"name": "f", "description": "d"}})");
  CHECK(t.render(Json::array(), Json::parse(tools), false, Json::object()) ==
        R"({"function": {"description": "d", "name": "f"}, "type": "function"})");
  CHECK_THROWS_WITH(t.render_json("[", "null", false, "{}"), Catch::Contains("chat messages"));
  CHECK_THROWS_WITH(
      t.render_json("[{\"role\": \"user\", \"content\": \"\xff\"}]", "null", false, "{}"),
      Catch::Contains("chat messages") && Catch::Contains("encoding"));
}

TEST_CASE("One ChatTemplate renders from many threads at once", "[chat_template]") {
  ChatTemplate t = ChatTemplate::from_directory(fs::path(VIME_ASSET_DIR) / "tokenizer-qwen3");
  const Json messages =
      Json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
      {"role": "assistant", "content": "<think>\nr\n</think>\n\nA"}, {"role": "user", "content": "U2"}])");
  const std::string expected =
      t.render(messages, Json(), true, Json::parse(R"({"enable_thinking": false})"));
  std::vector<std::future<bool>> results;
  for (int i = 0; i < 8; ++i) {
    results.push_back(std::async(std::launch::async, [&] {
      bool same = true;
      for (int k = 0; k < 200; ++k) {
        same = same && t.render(messages, Json(), true,
                                Json::parse(R"({"enable_thinking": false})")) == expected;
      }
      return same;
    }));
  }
  for (auto& r : results) CHECK(r.get());
  CHECK(expected.find("<think>\n\n</think>\n\n") != std::string::npos);
}
