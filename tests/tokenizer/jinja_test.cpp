// The interpreter on its own: one-line cases for each construct, filter, test, method and global,
// compared with transformers' Jinja2 (tests/data/chat_templates/jinja_cases.jsonl, made by
// scripts/goldens/make_chat_template_goldens.py), then the guards no golden can show.
#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "vime/json.hpp"
#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/json_value.hpp"
#include "vime/tokenizer/jinja/template.hpp"

namespace fs = std::filesystem;
using vime::Json;
using namespace vime::tokenizer::jinja;

namespace {

std::string render(std::string_view source, std::string_view context_json = "{}") {
  return Template(source).render(value_from_json_text(context_json, "test context").as_dict());
}

TemplateError error_of(std::string_view source, std::string_view context_json = "{}") {
  try {
    std::string text = render(source, context_json);
    FAIL("rendered instead of raising: " << text);
  } catch (const TemplateError& e) {
    return e;
  }
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("Each construct renders as transformers' Jinja2 renders it", "[jinja]") {
  std::ifstream in(fs::path(VIME_SOURCE_DIR) / "tests/data/chat_templates/jinja_cases.jsonl");
  REQUIRE(in.good());
  std::string line;
  REQUIRE(std::getline(in, line));
  const Json context_line = Json::parse(line);
  // The context again as ordered text: dict order shows in printed dicts and tojson.
  std::string context_text = line.substr(line.find(':') + 1);
  context_text.pop_back();
  const Value context = value_from_json_text(context_text, "jinja_cases.jsonl context");
  int cases = 0;
  while (std::getline(in, line)) {
    const Json golden = Json::parse(line);
    const std::string& name = golden.at("name").as_string();
    const std::string& source = golden.at("template").as_string();
    INFO(name << ": " << source);
    ++cases;
    if (const Json* text = golden.find("text")) {
      try {
        CHECK(Template(source).render(context.as_dict()) == text->as_string());
      } catch (const TemplateError& e) {
        FAIL_CHECK("unexpected error: " << e.what());
      }
      continue;
    }
    const Json& expected = golden.at("error");
    try {
      std::string got = Template(source).render(context.as_dict());
      FAIL_CHECK("rendered instead of raising: " << got);
    } catch (const TemplateError& e) {
      CHECK(e.kind() == expected.at("type").as_string());
      CHECK(e.message() == expected.at("message").as_string());
      if (!expected.at("line").is_null()) CHECK(e.line() == expected.at("line").as_int());
    }
  }
  CHECK(cases >= 130);
  CHECK(context_line.at("context").is_object());
}

TEST_CASE("transformers and @huggingface/jinja part ways: we follow transformers", "[jinja]") {
  // Python's str(None) is "None"; @huggingface/jinja trims None to "".
  CHECK(render("[{{ none | trim }}]") == "[None]");
  // '\n' in a template string literal is a newline to Python, so lstrip removes newlines.
  CHECK(render("[{{ x.lstrip('\\n') }}]", R"({"x": "\n\nhi\n"})") == "[hi\n]");
  CHECK(render("{{ x | tojson }}", R"({"x": {"b": 1, "a": "é"}})") == R"({"b": 1, "a": "é"})");
}

TEST_CASE("Errors carry the template line", "[jinja]") {
  TemplateError e = error_of("a\nb\n{% for m in xs %}\n  {{ m.content.upper() }}\n{% endfor %}",
                             R"({"xs": [{}]})");
  CHECK(e.line() == 4);
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("line 4: UndefinedError:"));
  CHECK(error_of("\n\n{% if x %}").line() == 3);
  CHECK(error_of("ok\n{{ raise_exception('bad role') }}").message() == "bad role");
}

TEST_CASE("Runaway templates raise instead of crashing", "[jinja]") {
  SECTION("infinite macro recursion") {
    TemplateError e = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    CHECK(e.kind() == "RecursionError");
  }
  SECTION("deeply nested expressions") {
    std::string source = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
    CHECK(error_of(source).kind() == "TemplateSyntaxError");
  }
  SECTION("deeply nested blocks") {
    std::string source;
    for (int i = 0; i < 3000; ++i) source += "{% if true %}";
    CHECK(error_of(source).kind() == "TemplateSyntaxError");
  }
  SECTION("deep unary chains") {
    CHECK(error_of("{{ " + std::string(10000, '-') + "1 }}").kind() == "TemplateSyntaxError");
    CHECK(error_of("{{ " +
                   [] {
                     std::string s;
                     for (int i = 0; i < 5000; ++i) s += "not ";
                     return s;
                   }() +
                   "x }}")
              .kind() == "TemplateSyntaxError");
  }
  SECTION("huge ranges") {
    CHECK(error_of("{{ range(10**9) | length }}").kind() == "OverflowError");
  }
}

TEST_CASE("64-bit integers raise on overflow instead of wrapping", "[jinja]") {
  CHECK(render("{{ 2 ** 62 }} {{ (-1) ** 1000000000000 }} {{ 9223372036854775807 // -1 }}") ==
        "4611686018427387904 1 -9223372036854775807");
  for (const char* source : {"{{ 2 ** 64 }}", "{{ 9223372036854775807 + 1 }}", "{{ x * 3 }}",
                             "{{ -x - x - x }}", "{{ (-x - x) // -1 }}"}) {
    INFO(source);
    CHECK(error_of(source, R"({"x": 4611686018427387904})").kind() == "OverflowError");
  }
}

TEST_CASE("strftime_now formats the current local time", "[jinja]") {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char year[8];
  std::strftime(year, sizeof year, "%Y", &local);
  CHECK(render("{{ strftime_now('%Y') }}") == year);
}

TEST_CASE("JSON context keeps key order; vime::Json context is sorted", "[jinja]") {
  Value ordered = value_from_json_text(R"({"z": 1, "a": 2})", "test");
  CHECK(Template("{{ d | tojson }}").render([&] {
    Dict c;
    c.set(Value("d"), ordered);
    return c;
  }()) == R"({"z": 1, "a": 2})");
  Value sorted = value_from_json(Json::parse(R"({"z": 1, "a": 2})"));
  CHECK(sorted.as_dict().items.front().first.as_string() == "a");
  CHECK_THROWS_WITH(value_from_json_text("{\"a\": }", "messages.jsonl:3"),
                    Catch::Contains("messages.jsonl:3"));
}
