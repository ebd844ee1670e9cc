#include "vime/data/prompt_dataset.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/data/tokenizer_hooks.hpp"
#include "vime/error.hpp"

using vime::Json;
using vime::data::DatasetOptions;
using vime::data::PromptDataset;

namespace {

// A stand-in chat template, enough to see what the dataset hands the renderer.
std::string render_chatml(const Json& messages, const Json& tools, const Json& kwargs) {
  std::string out;
  if (tools.is_array()) out += "<tools>" + tools.dump() + "</tools>\n";
  for (const Json& m : messages.as_array())
    out += "<|" + m.at("role").as_string() + "|>" + m.at("content").as_string() + "\n";
  if (const Json* think = kwargs.find("enable_thinking"); think && !think->as_bool())
    out += "<no_think>";
  return out + "<|assistant|>";
}

// Whitespace-separated words as "tokens".
size_t count_words(std::string_view text) {
  size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ' || c == '\n';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

}  // namespace

TEST_CASE("rows become samples through the configured keys", "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write(
      "d.jsonl", R"({"question": "1+1?", "answer": 2, "meta": {"rm_type": "math"}})"
                 "\n"
                 R"({"question": "name?", "answer": {"ground_truth": {"target": ["x", "y"]}}})"
                 "\n"
                 R"({"question": "list?", "answer": [1, "two"], "meta": "{\"source\": \"s\"}"})"
                 "\n"
                 R"({"question": [{"role": "user", "content": "hi"}], "answer": null})"
                 "\n");
  DatasetOptions o;
  o.input_key = "question";
  o.label_key = "answer";
  o.metadata_key = "meta";
  PromptDataset ds(path.string(), o);
  REQUIRE(ds.size() == 4);
  CHECK(ds.at(0).prompt == Json("1+1?"));
  CHECK(ds.at(0).label == Json(2));
  CHECK(ds.at(0).metadata.at("rm_type") == Json("math"));
  CHECK(ds.at(1).label.at("ground_truth").at("target").size() == 2);
  CHECK(ds.at(1).metadata == Json::object());
  CHECK(ds.at(2).label == Json(Json::Array{Json(1), Json("two")}));
  CHECK(ds.at(2).metadata.at("source") == Json("s"));  // metadata stored as a JSON string
  CHECK(ds.at(3).prompt.is_array());
  CHECK(ds.at(3).label.is_null());
  CHECK(ds.report().bad_lines.empty());
}

TEST_CASE("rows missing keys are reported by line and the rest are kept", "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write("d.jsonl", R"({"input": "a", "label": 1})"
                                   "\n"
                                   R"({"prompt": "b", "label": 2})"
                                   "\n"
                                   R"({"input": "c"})"
                                   "\n"
                                   R"({"input": 5, "label": 3})"
                                   "\n"
                                   R"({"input": "e", "label": 4, "metadata": [1]})"
                                   "\n"
                                   "garbage\n"
                                   R"({"input": "g", "label": 6})"
                                   "\n");
  DatasetOptions o;
  o.label_key = "label";
  PromptDataset ds(path.string(), o);
  REQUIRE(ds.size() == 2);
  CHECK(ds.at(1).prompt == Json("g"));
  const auto& bad = ds.report().bad_lines;
  REQUIRE(bad.size() == 5);
  CHECK(bad[0].line_number == 2);
  CHECK(bad[0].reason == "no key 'input'");
  CHECK(bad[1].reason == "no key 'label'");
  CHECK(bad[2].reason == "'input' is an integer, not a string or a list of messages");
  CHECK(bad[3].reason == "'metadata' is an array, not an object");
  CHECK(bad[4].line_number == 6);

  auto none = dir.write("none.jsonl", R"({"prompt": "b"})"
                                      "\n");
  CHECK_THROWS_WITH(PromptDataset(none.string(), o), Catch::Contains("no usable prompt left") &&
                                                         Catch::Contains("line 1") &&
                                                         Catch::Contains("no key 'input'"));
}

TEST_CASE("--apply-chat-template renders through the PromptRenderer with tools and kwargs",
          "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write(
      "d.jsonl",
      R"({"input": "What is 2+2?", "tools": "[{\"name\": \"calc\"}]"})"
      "\n"
      R"({"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})"
      "\n");
  DatasetOptions o;
  o.apply_chat_template = true;
  o.tool_key = "tools";
  o.apply_chat_template_kwargs = Json(Json::Object{{"enable_thinking", Json(false)}});
  PromptDataset ds(path.string(), o, render_chatml);
  REQUIRE(ds.size() == 2);
  CHECK(
      ds.at(0).prompt ==
      Json("<tools>[{\"name\":\"calc\"}]</tools>\n<|user|>What is 2+2?\n<no_think><|assistant|>"));
  CHECK(ds.at(0).metadata.at("tools").at(size_t{0}).at("name") == Json("calc"));
  CHECK(ds.at(1).prompt == Json("<|system|>Be brief.\n<|user|>Hi\n<no_think><|assistant|>"));
  CHECK_THROWS_WITH(PromptDataset(path.string(), o), Catch::Contains("renderer"));
}

TEST_CASE("the long-prompt filter drops prompts over --rollout-max-prompt-len", "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write("d.jsonl", R"({"input": "one two three"})"
                                   "\n"
                                   R"({"input": "one two three four five"})"
                                   "\n"
                                   R"({"input": "one"})"
                                   "\n");
  DatasetOptions o;
  o.max_prompt_tokens = 3;
  PromptDataset ds(path.string(), o, {}, count_words);
  REQUIRE(ds.size() == 2);
  CHECK(ds.at(0).prompt == Json("one two three"));  // exactly the limit is kept
  CHECK(ds.at(1).prompt == Json("one"));
  CHECK(ds.report().num_too_long == 1);

  // The filter counts the rendered prompt, template text included (slime filters after rendering).
  o.apply_chat_template = true;
  PromptDataset rendered(path.string(), o, render_chatml, count_words);
  CHECK(rendered.size() == 1);

  o.max_prompt_tokens = 0;
  o.apply_chat_template = false;
  CHECK_THROWS_WITH(PromptDataset(path.string(), o, {}, count_words),
                    Catch::Contains("3 prompt(s) longer than --rollout-max-prompt-len 0"));
  CHECK_THROWS_WITH(PromptDataset(path.string(), o), Catch::Contains("tokenizer"));
}

TEST_CASE("shuffle orders rows as slime's Random(seed + epoch) does", "[data]") {
  vime::test::TempDir dir;
  std::string text;
  for (int i = 0; i < 10; ++i) text += "{\"input\": \"" + std::to_string(i) + "\"}\n";
  auto path = dir.write("d.jsonl", text);
  DatasetOptions o;
  o.seed = 42;
  PromptDataset ds(path.string(), o);
  auto order = [&] {
    std::string s;
    for (size_t i = 0; i < ds.size(); ++i) s += ds.at(i).prompt.as_string();
    return s;
  };
  CHECK(order() == "0123456789");
  // python3 -c "import random; p=list(range(10)); random.Random(42).shuffle(p); print(p)"
  ds.shuffle(0);
  CHECK(order() == "7328569401");
  ds.shuffle(1);  // Random(43)
  CHECK(order() == "8156973240");
  ds.shuffle(0);
  CHECK(order() == "7328569401");
}

// slime's test_filter_long_prompt: "pN:len" prompts count as `len` tokens; survivors keep their
// order.
TEST_CASE("the long-prompt filter keeps the survivors' order (slime's vector)", "[data]") {
  vime::test::TempDir dir;
  std::string text;
  const int lengths[] = {5, 500, 5, 500, 5, 5};
  for (int i = 0; i < 6; ++i)
    text += "{\"input\": \"p" + std::to_string(i) + ":" + std::to_string(lengths[i]) + "\"}\n";
  auto path = dir.write("d.jsonl", text);
  DatasetOptions o;
  o.max_prompt_tokens = 100;
  auto encoded_length = [](std::string_view prompt) {
    return static_cast<size_t>(std::stoi(std::string(prompt.substr(prompt.find(':') + 1))));
  };
  PromptDataset ds(path.string(), o, {}, encoded_length);
  std::vector<std::string> kept;
  for (size_t i = 0; i < ds.size(); ++i) kept.push_back(ds.at(i).prompt.as_string());
  CHECK(kept == std::vector<std::string>{"p0:5", "p2:5", "p4:5", "p5:5"});
  CHECK(ds.report().num_too_long == 2);
}

namespace {

// A vime::Tokenizer of whole words, enough to see what the dataset asks of a real one.
class WordTokenizer : public vime::Tokenizer {
 public:
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const override {
    std::vector<int32_t> ids(count_words(text), 7);
    if (add_special_tokens) ids.insert(ids.begin(), 1);  // a BOS the filter must not count
    return ids;
  }
  std::string decode(std::span<const int32_t>, bool) const override { return {}; }
  std::string apply_chat_template(const Json& messages, const Json& tools,
                                  bool add_generation_prompt, const Json& kwargs) const override {
    std::string out = render_chatml(messages, tools, kwargs);
    return add_generation_prompt ? out : out.substr(0, out.size() - 13);
  }
  std::optional<int32_t> eos_token_id() const override { return 2; }
  std::optional<int32_t> pad_token_id() const override { return std::nullopt; }
  int64_t vocab_size() const override { return 8; }
};

}  // namespace

TEST_CASE("a vime::Tokenizer supplies the chat template and the token count", "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write("d.jsonl", R"({"input": "a b"})"
                                   "\n"
                                   R"({"input": "a b c d"})"
                                   "\n");
  WordTokenizer tokenizer;
  DatasetOptions o;
  o.apply_chat_template = true;
  o.max_prompt_tokens = 3;  // "<|user|>a b\n<|assistant|>" is 3 words; the longer one is 5
  PromptDataset ds(path.string(), o, vime::data::chat_template_renderer(tokenizer),
                   vime::data::token_counter(tokenizer));
  REQUIRE(ds.size() == 1);
  CHECK(ds.at(0).prompt == Json("<|user|>a b\n<|assistant|>"));  // add_generation_prompt=true
}
