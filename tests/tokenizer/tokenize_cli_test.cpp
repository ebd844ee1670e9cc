// `vime tokenize encode|decode` run as a user runs it: real binary, real tokenizer files, JSONL files.
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

std::string args(const std::string& mode, const std::string& tokenizer, const std::filesystem::path& in,
                 const std::filesystem::path& out) {
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

TEST_CASE("vime tokenize encode matches the goldens end to end (GPT-2 files, Llama-3)", "[tokenizer]") {
  for (const std::string name : {"gpt2", "llama3"}) {
    const auto goldens = vime::test::read_golden(name + "_encode.jsonl");
    TempDir dir;
    std::ostringstream input;
    for (size_t i = 0; i < goldens.size(); i += 10) input << "{\"text\":" << goldens[i].at("text").dump() << "}\n";
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

TEST_CASE("vime tokenize: bad input is one clear error, and no output file is left", "[tokenizer]") {
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
    CHECK(run_vime("tokenize encode --input " + in.string() + " --output " + out.string()).exit_code == 2);
    CHECK(run_vime("tokenize encode --tokenizer " + dir.path().string() + " --input /nonexistent.jsonl" +
                   " --output " + out.string()).exit_code == 2);
    CHECK(run_vime("tokenize decode --add-special-tokens").exit_code == 2);
  }
  SECTION("a directory without tokenizer files") {
    auto in = dir.write("in.jsonl", "{\"text\": \"ok\"}\n");
    auto r = run_vime("tokenize encode --tokenizer " + dir.path().string() + " --input " + in.string() +
                      " --output " + out.string());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("has no tokenizer.json"));
  }
}
