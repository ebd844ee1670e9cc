// `vime tokenize encode|decode` run as a user runs it: real binary, real tokenizer files, JSONL
// files.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "support/test_support.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"

namespace {

using vime::Json;
using vime::test::run_vime;
using vime::test::TempDir;

std::vector<Json> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<Json> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(Json::parse(line));
  return lines;
}

std::string args(const std::string& mode, const std::string& tokenizer,
                 const std::filesystem::path& in, const std::filesystem::path& out) {
  return "tokenize " + mode + " --tokenizer " + vime::test::asset_dir(tokenizer) + " --input " +
         in.string() + " --output " + out.string();
}

}  // namespace

TEST_CASE("vime tokenize encode adds ids to each line, keeping its other keys", "[tokenizer]") {
  TempDir dir;
  auto in = dir.write("in.jsonl",
                      "{\"text\": \"Hello, my dog is cute\", \"id\": 7}\n"
                      "\n"
                      "{\"text\": \"<|im_start|>user\\nhi<|im_end|>\"}\n");
  auto r = run_vime(args("encode", "qwen3", in, dir.path() / "out.jsonl"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto lines = read_jsonl(dir.path() / "out.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("ids") == Json(std::vector<int>{9707, 11, 847, 5562, 374, 18838}));
  CHECK(lines[0].at("id") == Json(7));
  CHECK(lines[1].at("ids") == Json(std::vector<int>{151644, 872, 198, 6023, 151645}));
}

TEST_CASE("vime tokenize decode adds text, honouring skip_special_tokens", "[tokenizer]") {
  TempDir dir;
  auto in = dir.write("in.jsonl",
                      "{\"ids\": [151644, 872, 198, 6023, 151645], \"skip_special_tokens\": true}\n"
                      "{\"ids\": [151644, 872, 198, 6023, 151645]}\n");
  auto r = run_vime(args("decode", "qwen3", in, dir.path() / "out.jsonl"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto lines = read_jsonl(dir.path() / "out.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("text").as_string() == "user\nhi");
  CHECK(lines[1].at("text").as_string() == "<|im_start|>user\nhi<|im_end|>");
}

TEST_CASE("vime tokenize encode matches the goldens end to end (GPT-2's own files)",
          "[tokenizer]") {
  for (const std::string name : {"gpt2"}) {
    const auto goldens = vime::test::read_golden(name + "_encode.jsonl");
    TempDir dir;
    std::ostringstream input;
    for (size_t i = 0; i < goldens.size(); i += 10)
      input << "{\"text\":" << goldens[i].at("text").dump() << "}\n";
    auto in = dir.write("in.jsonl", input.str());
    auto r = run_vime(args("encode", name, in, dir.path() / "out.jsonl") + " --add-special-tokens");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto lines = read_jsonl(dir.path() / "out.jsonl");
    REQUIRE(lines.size() == (goldens.size() + 9) / 10);
    for (size_t i = 0; i < lines.size(); ++i) {
      INFO(name << " line " << i);
      CHECK(lines[i].at("ids") == goldens[i * 10].at("ids_special"));
    }
  }
}

TEST_CASE("vime tokenize: bad input is one clear error, and no output file is left",
          "[tokenizer]") {
  TempDir dir;
  const auto out = dir.path() / "out.jsonl";
  SECTION("a malformed line names the file and line") {
    auto in = dir.write("in.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"unterminated\n");
    auto r = run_vime(args("encode", "qwen3", in, out));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("in.jsonl:2"));
    CHECK(vime::test::count_lines(r.output) == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  SECTION("a missing key") {
    auto in = dir.write("in.jsonl", "{\"txt\": \"ok\"}\n");
    auto r = run_vime(args("encode", "qwen3", in, out));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("in.jsonl:1: missing \"text\""));
    CHECK_FALSE(std::filesystem::exists(out));
  }
  SECTION("ids that are not integers") {
    auto in = dir.write("in.jsonl", "{\"ids\": [1, \"two\"]}\n");
    auto r = run_vime(args("decode", "qwen3", in, out));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("\"ids\" must be a list of token ids"));
  }
  SECTION("usage errors exit 2") {
    auto in = dir.write("in.jsonl", "{\"text\": \"ok\"}\n");
    CHECK(run_vime("tokenize encode --input " + in.string() + " --output " + out.string())
              .exit_code == 2);
    CHECK(run_vime("tokenize encode --tokenizer " + dir.path().string() +
                   " --input /nonexistent.jsonl" + " --output " + out.string())
              .exit_code == 2);
  }
}

TEST_CASE("vime tokenize chat renders the tokenizer's template, keeping each line as it was",
          "[tokenizer]") {
  TempDir dir;
  const std::string tool_line =
      R"({"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [{"type": "function", )"
      R"("function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}], )"
      R"("add_generation_prompt": true, "kwargs": {"enable_thinking": false}})";
  auto in = dir.write(
      "in.jsonl",
      tool_line + "\n" +
          R"({"messages": [{"role": "user", "content": "hi"}], "tools": null, "add_generation_prompt": false})" +
          "\n");
  auto r = run_vime(args("chat", "qwen3", in, dir.path() / "out.jsonl"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream out(dir.path() / "out.jsonl");
  std::string first, second;
  std::getline(out, first);
  std::getline(out, second);
  CHECK(first.starts_with(tool_line.substr(0, tool_line.size() - 1)));  // the input, then "text"
  const std::string text = Json::parse(first).at("text").as_string();
  CHECK(text.starts_with("<|im_start|>system\n# Tools\n"));
  // tojson keeps the tool's key order, as transformers prints it.
  CHECK_THAT(text,
             Catch::Contains(
                 R"({"type": "function", "function": {"name": "get_weather", "parameters": )"));
  CHECK(
      text.ends_with("<|im_start|>user\nWeather in "
                     "Paris?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  CHECK(Json::parse(second).at("text").as_string() == "<|im_start|>user\nhi<|im_end|>\n");
}

TEST_CASE("vime tokenize chat: a template that raises gives an error field, bad lines fail",
          "[tokenizer]") {
  TempDir dir;
  // The real Qwen3 tokenizer.json beside a template that refuses system messages.
  std::filesystem::copy_file(vime::test::asset_dir("qwen3") + "/tokenizer.json",
                             dir.path() / "tokenizer.json");
  dir.write(
      "tokenizer_config.json",
      R"({"chat_template": "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ messages[0].content }}"})");
  auto in = dir.write("in.jsonl", R"({"messages": [{"role": "system", "content": "x"}]})"
                                  "\n"
                                  R"({"messages": [{"role": "user", "content": "fine"}]})"
                                  "\n");
  auto r = run_vime("tokenize chat --tokenizer " + dir.path().string() + " --input " + in.string() +
                    " --output " + (dir.path() / "out.jsonl").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto lines = read_jsonl(dir.path() / "out.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0].at("error").as_string(), Catch::Contains("System role not supported"));
  CHECK_FALSE(lines[0].contains("text"));
  CHECK(lines[1].at("text").as_string() == "fine");

  auto bad = dir.write("bad.jsonl", R"({"messages": {"role": "user"}})"
                                    "\n");
  auto r2 = run_vime("tokenize chat --tokenizer " + dir.path().string() + " --input " +
                     bad.string() + " --output " + (dir.path() / "out2.jsonl").string());
  CHECK(r2.exit_code == 1);
  CHECK_THAT(r2.output, Catch::Contains("bad.jsonl:1: \"messages\" must be a list"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out2.jsonl"));
}

TEST_CASE("vime tokenize chat reproduces the chat-template goldens end to end", "[tokenizer]") {
  // tests/data/chat_templates/{qwen3,llama3}.jsonl: transformers' renderings of the real templates;
  // their lines are `vime tokenize chat` input plus "text" (or "error" when the template raised).
  for (const std::string name : {"qwen3", "llama3"}) {
    std::ifstream golden_file(std::string(VIME_SOURCE_DIR) + "/tests/data/chat_templates/" + name +
                              ".jsonl");
    std::vector<Json> goldens;
    std::ostringstream input;
    std::string line;
    while (std::getline(golden_file, line)) {
      // The request keeps its key order (tojson prints tool arguments in it), so it is edited as
      // text.
      rapidjson::Document request;
      request.Parse(line.data(), line.size());
      request.RemoveMember("text");
      request.RemoveMember("error");
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
      request.Accept(writer);
      input << buffer.GetString() << "\n";
      goldens.push_back(Json::parse(line));
    }
    REQUIRE(goldens.size() >= 50);
    TempDir dir;
    auto in = dir.write("in.jsonl", input.str());
    auto r = run_vime(args("chat", name, in, dir.path() / "out.jsonl"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto lines = read_jsonl(dir.path() / "out.jsonl");
    REQUIRE(lines.size() == goldens.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      INFO(goldens[i].at("id").as_string());
      CHECK(lines[i].contains("error") == goldens[i].contains("error"));
      if (goldens[i].contains("text") && lines[i].contains("text")) {
        CHECK(lines[i].at("text").as_string() == goldens[i].at("text").as_string());
      }
    }
  }
}
