// HfTokenizer beyond the goldens: reference ids from HF tokenizers, special-token ids, bad input
// and corrupt files, and many threads at once.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "support/test_support.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "vime/error.hpp"
#include "vime/tokenizer/chat_request.hpp"
#include "vime/tokenizer/onig_compat.hpp"
#include "vime/tokenizer/read_file.hpp"

namespace {

using vime::test::real_tokenizer;
using vime::tokenizer::HfTokenizer;
using Ids = std::vector<int32_t>;

// A tiny byte-level BPE file: enough to test the loader's error paths without the 10 MB
// vocabularies.
std::string tiny_tokenizer_json(
    const std::string& model_extra = "",
    const std::string& pre_tokenizer =
        R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})") {
  std::string vocab = "{";
  for (int c = 33; c < 127; ++c) {
    if (c == '"' || c == '\\') continue;
    vocab += '"';
    vocab += static_cast<char>(c);
    vocab += "\": ";
    vocab += std::to_string(c);
    vocab += ',';
  }
  vocab += R"("\"": 34, "\\": 92, "Ġ": 200, "he": 300, "hel": 301, "hello": 302, "lo": 303})";
  return R"({"version": "1.0", "added_tokens": [{"id": 99, "content": "<eos>", "special": true}],
    "normalizer": null, "pre_tokenizer": )" +
         pre_tokenizer + R"(, "post_processor": null,
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": )" +
         vocab + R"(, "merges": ["h e", "l o", "he l", "hel lo"])" + model_extra + "}}";
}

}  // namespace

TEST_CASE("Qwen3 reproduces HF tokenizers' reference ids", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  CHECK(qwen.encode("Hello, my dog is cute") == Ids{9707, 11, 847, 5562, 374, 18838});
  CHECK(qwen.encode("<|im_start|>user\nhi<|im_end|>") == Ids{151644, 872, 198, 6023, 151645});
  CHECK(qwen.decode(Ids{151644, 872, 198, 6023, 151645}, true) == "user\nhi");
}

TEST_CASE("Special-token ids and vocabulary sizes come from the files", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  CHECK(qwen.eos_token_id() == 151645);  // <|im_end|>
  CHECK(qwen.pad_token_id() == 151643);  // <|endoftext|>
  CHECK_FALSE(qwen.bos_token_id().has_value());
  CHECK(qwen.vocab_size() == 151669);
  CHECK(qwen.is_special(151644));
  CHECK(qwen.id_to_token(151667) == "<think>");
  CHECK(qwen.token_to_id("<think>") == 151667);
  const auto& llama = real_tokenizer("llama3");
  CHECK(llama.bos_token_id() == 128000);
  CHECK(llama.eos_token_id() == 128001);
  CHECK(llama.vocab_size() == 128256);
  const auto& gpt2 = real_tokenizer("gpt2");
  CHECK(gpt2.eos_token_id() == 50256);
  CHECK(gpt2.vocab_size() == 50257);
  CHECK(gpt2.encode("Hello world<|endoftext|>") == Ids{15496, 995, 50256});
}

TEST_CASE("Invalid UTF-8 is read as U+FFFD, never a crash", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  CHECK(qwen.encode("a\xff\xfe b\xe4\xbd") ==
        qwen.encode("a\xEF\xBF\xBD\xEF\xBF\xBD b\xEF\xBF\xBD"));
  CHECK(qwen.encode("").empty());
  CHECK(qwen.encode(std::string("a\0b", 3)).size() == 3);
}

TEST_CASE("Decode skips ids outside the vocabulary, as HF does", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  CHECK(qwen.decode(Ids{9707, -1, 999999, 11}) == "Hello,");
  CHECK(qwen.decode(Ids{}).empty());
}

TEST_CASE("Decode cut inside a character yields U+FFFD; Llama-3 cleans up as transformers does",
          "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  const auto ids = qwen.encode("𓀀");  // three byte-level tokens
  REQUIRE(ids.size() == 3);
  CHECK(qwen.decode(Ids(ids.begin(), ids.end() - 1)).ends_with("\xEF\xBF\xBD"));
  const auto& llama = real_tokenizer("llama3");
  const auto text_ids = llama.encode("Hi , it 's done .");
  CHECK(llama.decode(text_ids) == "Hi, it's done.");  // clean_up_tokenization_spaces
  CHECK(llama.decode_text(text_ids, false, false) ==
        "Hi , it 's done .");  // the Rust decoder alone
}

TEST_CASE("Many threads encode at once and agree with one thread", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  const auto goldens = vime::test::read_golden("qwen3_encode.jsonl");
  std::vector<std::string> texts;
  for (size_t i = 0; i < goldens.size(); i += 4) texts.push_back(goldens[i].at("text").as_string());
  std::vector<Ids> expected;
  for (const auto& t : texts) expected.push_back(qwen.encode(t));
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = t; i < texts.size() + t; ++i) {
          const size_t k = i % texts.size();
          if (qwen.encode(texts[k]) != expected[k]) ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("A tiny tokenizer file loads and merges", "[tokenizer]") {
  auto tok = HfTokenizer::from_json(tiny_tokenizer_json());
  CHECK(tok->encode("hello") == Ids{302});
  CHECK(tok->vocab_size() == 100);  // 99 in the model, then <eos>
  CHECK(tok->encode("help<eos>") == Ids{301, 'p', 99});
  CHECK(tok->decode(Ids{302, 99}) == "hello<eos>");
  CHECK(tok->decode(Ids{302, 99}, true) == "hello");
}

TEST_CASE("Corrupt or unsupported tokenizer files give one clear error naming the file",
          "[tokenizer]") {
  using Catch::Contains;
  const auto fails_with = [](const std::string& json, const std::string& message) {
    INFO(message);
    CHECK_THROWS_WITH(HfTokenizer::from_json(json, {}, "dir/tokenizer.json"),
                      Contains("dir/tokenizer.json") && Contains(message));
  };
  const std::string good = tiny_tokenizer_json();
  fails_with(good.substr(0, good.size() / 2), "is not valid JSON");
  fails_with("[1, 2]", "is not a JSON object");
  fails_with(R"({"model": {"type": "Unigram", "vocab": []}})",
             "model type 'Unigram' is not supported");
  fails_with(R"({"normalizer": {"type": "Precompiled"}, "model": {"type": "BPE", "vocab": {}}})",
             "normalizer type 'Precompiled' is not supported");
  fails_with(tiny_tokenizer_json("", R"({"type": "Whitespace"})"),
             "pre-tokenizer type 'Whitespace'");
  fails_with(tiny_tokenizer_json("", R"({"type": "Split", "pattern": {"Regex": "(unclosed"}})"),
             "does not compile");
  fails_with(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})",
             "names a token that is not in the vocabulary");
  fails_with(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}})",
             "model.merges[0]");
  fails_with(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}}})", "is not an integer");
  fails_with(R"({"version": "1.0"})", "missing 'model'");
}

TEST_CASE("Loading a directory: missing files and GPT-2 files are told apart", "[tokenizer]") {
  vime::test::TempDir dir;
  CHECK_THROWS_WITH(HfTokenizer::from_directory(dir.path() / "nope"),
                    Catch::Contains("is not a directory"));
  CHECK_THROWS_WITH(HfTokenizer::from_directory(dir.path()),
                    Catch::Contains("has no tokenizer.json"));
  dir.write("tokenizer.json", tiny_tokenizer_json());
  dir.write("tokenizer_config.json", "{not json");
  CHECK_THROWS_WITH(HfTokenizer::from_directory(dir.path()),
                    Catch::Contains("tokenizer_config.json"));
  dir.write("tokenizer_config.json", R"({"eos_token": {"content": "<eos>"}, "pad_token": null})");
  auto tok = HfTokenizer::from_directory(dir.path());
  CHECK(tok->eos_token_id() == 99);
  CHECK_FALSE(tok->pad_token_id().has_value());
  // GPT-2's original files, found by name.
  vime::test::TempDir gpt2;
  gpt2.write("encoder.json",
             vime::tokenizer::read_file(vime::test::asset_dir("gpt2") + "/encoder.json"));
  gpt2.write("vocab.bpe", "#version: 0.2\nbroken line with spaces\n");
  CHECK_THROWS_WITH(HfTokenizer::from_directory(gpt2.path()), Catch::Contains("vocab.bpe:2"));
}

TEST_CASE("apply_chat_template renders the directory's template (vime::Tokenizer interface)",
          "[tokenizer]") {
  const vime::Tokenizer& qwen = real_tokenizer("qwen3");
  vime::Json messages = vime::Json::array();
  messages.push_back(vime::Json(vime::Json::Object{{"role", "user"}, {"content", "hi"}}));
  vime::Json kwargs = vime::Json::object();
  kwargs["enable_thinking"] = false;
  CHECK(qwen.apply_chat_template(messages, vime::Json(), true, kwargs) ==
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  CHECK(qwen.apply_chat_template(messages, vime::Json(), true, vime::Json::object()) ==
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  // GPT-2's files have no chat template: one clear error.
  CHECK_THROWS_AS(real_tokenizer("gpt2").apply_chat_template(messages, vime::Json(), true, kwargs),
                  vime::Error);
}

TEST_CASE("with_json_field adds a key to a JSONL line without reordering it", "[tokenizer]") {
  using vime::tokenizer::with_json_field;
  CHECK(with_json_field(R"({"b": 1, "a": [2]})", "text", R"("x")") ==
        R"({"b": 1, "a": [2],"text":"x"})");
  CHECK(with_json_field("{ }", "ids", "[1]") == R"({ "ids":[1]})");
  CHECK(with_json_field(R"({"z": 0, "text": "old", "a": 1})", "text", R"("new")") ==
        R"({"z":0,"text":"new","a":1})");
}

TEST_CASE("Once the word cache is full, words are still encoded right", "[tokenizer]") {
  const auto& qwen = real_tokenizer("qwen3");
  // More distinct words than the cache holds (WordCache::kCapacity), encoded on a fresh thread.
  std::vector<std::string> words;
  for (int i = 0; i < 40000; ++i) {
    std::string w = " ";
    for (int n = i; n > 0 || w.size() == 1; n /= 26) w.push_back(static_cast<char>('a' + n % 26));
    words.push_back(w);
  }
  std::vector<Ids> first, again;
  std::thread([&] {
    for (const auto& w : words) first.push_back(qwen.encode(w));
    for (const auto& w : words) again.push_back(qwen.encode(w));  // now partly from the full cache
  }).join();
  std::vector<Ids> fresh;
  std::thread([&] {
    for (size_t i = words.size(); i-- > 0;)
      fresh.push_back(qwen.encode(words[i]));  // other words cached
  }).join();
  std::reverse(fresh.begin(), fresh.end());
  CHECK(first == again);
  CHECK(first == fresh);
}

TEST_CASE(
    "Oniguruma patterns are rewritten for PCRE2: scripts, and characters newer than PCRE2's "
    "Unicode",
    "[tokenizer]") {
  using vime::tokenizer::pcre2_pattern_for_oniguruma;
  CHECK(pcre2_pattern_for_oniguruma(R"(\p{Han}+|[^\p{Hiragana}])") ==
        R"(\p{sc:Han}+|[^\p{sc:Hiragana}])");
  CHECK(pcre2_pattern_for_oniguruma(R"(\s+(?!\S)|\d)") == R"(\s+(?!\S)|\d)");
  // U+11F04 (Kawi, Unicode 15) is a letter to Oniguruma and utf8proc; PCRE2 10.42 has Unicode 14.
  const std::string letters = pcre2_pattern_for_oniguruma(R"(\p{L}+)");
  CHECK_THAT(letters, Catch::StartsWith(R"([\p{L})") && Catch::Contains("11F04"));
  CHECK_THAT(pcre2_pattern_for_oniguruma(R"([^\s\p{L}])"), Catch::StartsWith(R"([^\s\p{L}\x{)"));
}
