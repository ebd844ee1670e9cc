// Renders every golden of tests/data/chat_templates/ (transformers' Jinja setup on python3-jinja2,
// scripts/goldens/make_chat_template_goldens.py) and requires the exact text, or an error where
// transformers raised.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vime/tokenizer/chat_template.hpp"

namespace fs = std::filesystem;
using vime::Json;
using vime::tokenizer::ChatTemplate;
using vime::tokenizer::ChatTemplateError;

namespace {

const fs::path kGoldenDir = fs::path(VIME_SOURCE_DIR) / "tests/data/chat_templates";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A member as JSON text in its original key order (what the render_json overload takes).
std::string member_text(const rapidjson::Value& object, const char* name) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  object[name].Accept(writer);
  return buffer.GetString();
}

ChatTemplate load(const std::string& name) {
  if (name == "qwen3")
    return ChatTemplate::from_directory(fs::path(VIME_ASSET_DIR) / "tokenizer-qwen3");
  if (name == "llama3")
    return ChatTemplate::from_directory(fs::path(VIME_ASSET_DIR) / "tokenizer-llama3");
  fs::path dir = kGoldenDir / "templates";
  return ChatTemplate::from_string(read_text(dir / (name + ".jinja")),
                                   Json::parse(read_text(dir / (name + ".special_tokens.json"))));
}

// Templates that call strftime_now("%Y-%m-%d") print today's date; the golden says which day it
// was made on, and our today is put back to that day before comparing.
std::string with_golden_day(std::string text, const rapidjson::Value& golden) {
  if (!golden.HasMember("today")) return text;
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char today_text[16];
  std::strftime(today_text, sizeof today_text, "%Y-%m-%d", &local);
  const std::string today = today_text, golden_day = golden["today"].GetString();
  for (size_t at = text.find(today); at != std::string::npos; at = text.find(today, at + 1)) {
    text.replace(at, today.size(), golden_day);
  }
  return text;
}

struct Counts {
  int texts = 0;
  int errors = 0;
};

Counts check_goldens(const std::string& name) {
  ChatTemplate chat = load(name);
  std::ifstream in(kGoldenDir / (name + ".jsonl"));
  REQUIRE(in.good());
  Counts counts;
  std::string line;
  while (std::getline(in, line)) {
    rapidjson::Document golden;
    golden.Parse(line.c_str(), line.size());
    REQUIRE_FALSE(golden.HasParseError());
    INFO(golden["id"].GetString());
    std::string messages = member_text(golden, "messages");
    std::string tools = member_text(golden, "tools");
    std::string kwargs = member_text(golden, "kwargs");
    bool add_generation_prompt = golden["add_generation_prompt"].GetBool();
    if (golden.HasMember("text")) {
      std::string expected(golden["text"].GetString(), golden["text"].GetStringLength());
      std::string got;
      try {
        got = with_golden_day(chat.render_json(messages, tools, add_generation_prompt, kwargs),
                              golden);
      } catch (const ChatTemplateError& e) {
        FAIL_CHECK("unexpected error: " << e.what());
        continue;
      }
      CHECK(got == expected);
      ++counts.texts;
    } else {
      std::string type = golden["error"]["type"].GetString();
      std::string message = golden["error"]["message"].GetString();
      INFO("transformers raised " << type << ": " << message);
      try {
        std::string got = chat.render_json(messages, tools, add_generation_prompt, kwargs);
        FAIL_CHECK("rendered instead of raising: " << got);
      } catch (const ChatTemplateError& e) {
        std::string what = e.what();
        CHECK_THAT(what,
                   Catch::Contains(type + ": " + message));  // Python's exception type and text
      }
      ++counts.errors;
    }
  }
  return counts;
}

}  // namespace

TEST_CASE("Qwen3's chat template renders as transformers renders it", "[chat_template]") {
  Counts c = check_goldens("qwen3");
  CHECK(c.texts >= 50);
  CHECK(c.errors > 0);
}

TEST_CASE("Llama-3's chat template renders as transformers renders it", "[chat_template]") {
  CHECK(check_goldens("llama3").texts >= 50);
}

TEST_CASE("More real-world chat templates render as transformers renders them", "[chat_template]") {
  for (const char* name :
       {"qwen2_5", "deepseek_r1_distill", "llama3_3_generation", "mistral_v0_1", "gpt_oss"}) {
    SECTION(name) { CHECK(check_goldens(name).texts >= 50); }
  }
}

TEST_CASE("Every interpreter construct renders as Jinja2 renders it", "[chat_template][jinja]") {
  CHECK(check_goldens("constructs").texts >= 100);
}
