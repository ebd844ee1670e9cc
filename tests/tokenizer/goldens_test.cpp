// The real Qwen3, Llama-3 and GPT-2 tokenizers against HF's Rust tokenizers (goldens made by
// scripts/goldens/make_tokenizer_goldens.js): every id of >= 2,000 strings, and decode.
#include <catch2/catch.hpp>

#include "tokenizer/tokenizer_fixtures.hpp"

namespace {

using vime::Json;

std::vector<int32_t> ids_of(const Json& array) {
  std::vector<int32_t> ids;
  for (const Json& id : array.as_array()) ids.push_back(static_cast<int32_t>(id.as_int()));
  return ids;
}

void check_encode_goldens(const vime::tokenizer::HfTokenizer& tok, const std::string& name,
                          size_t minimum = 2000) {
  const auto goldens = vime::test::read_golden(name + "_encode.jsonl");
  REQUIRE(goldens.size() >= minimum);
  size_t mismatches = 0;
  for (const Json& g : goldens) {
    const std::string& text = g.at("text").as_string();
    const auto want = ids_of(g.at("ids"));
    const auto want_special = ids_of(g.at("ids_special"));
    const auto got = tok.encode(text, false);
    const auto got_special = tok.encode(text, true);
    if (got != want || got_special != want_special) {
      if (++mismatches <= 5) {
        UNSCOPED_INFO("text " << Json(text).dump() << "\n  want " << vime::test::show_ids(want)
                              << "\n  got  " << vime::test::show_ids(got));
      }
    }
  }
  INFO(name << ": " << mismatches << " of " << goldens.size() << " strings differ");
  CHECK(mismatches == 0);
}

void check_decode_goldens(const vime::tokenizer::HfTokenizer& tok, const std::string& name,
                          size_t minimum = 1000) {
  const auto goldens = vime::test::read_golden(name + "_decode.jsonl");
  REQUIRE(goldens.size() >= minimum);
  size_t mismatches = 0;
  for (const Json& g : goldens) {
    const auto ids = ids_of(g.at("ids"));
    const std::string got = tok.decode(ids, g.at("skip_special_tokens").as_bool());
    if (got != g.at("text").as_string()) {
      if (++mismatches <= 5) {
        UNSCOPED_INFO("ids " << vime::test::show_ids(ids) << "\n  want " << g.at("text").dump()
                             << "\n  got  " << Json(got).dump());
      }
    }
  }
  INFO(name << ": " << mismatches << " of " << goldens.size() << " decodes differ");
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("Qwen3 encodes every golden string as HF's Rust tokenizers does",
          "[tokenizer][goldens]") {
  check_encode_goldens(vime::test::real_tokenizer("qwen3"), "qwen3");
}
TEST_CASE("Llama-3 encodes every golden string as HF's Rust tokenizers does",
          "[tokenizer][goldens]") {
  check_encode_goldens(vime::test::real_tokenizer("llama3"), "llama3");
}
TEST_CASE("GPT-2 (encoder.json + vocab.bpe) encodes every golden string as HF does",
          "[tokenizer][goldens]") {
  check_encode_goldens(vime::test::real_tokenizer("gpt2"), "gpt2");
}
TEST_CASE("Qwen3 decodes as HF does, with and without special tokens", "[tokenizer][goldens]") {
  check_decode_goldens(vime::test::real_tokenizer("qwen3"), "qwen3");
}
TEST_CASE("Llama-3 decodes as transformers does (clean_up_tokenization_spaces)",
          "[tokenizer][goldens]") {
  check_decode_goldens(vime::test::real_tokenizer("llama3"), "llama3");
}
TEST_CASE("GPT-2 decodes as HF does", "[tokenizer][goldens]") {
  check_decode_goldens(vime::test::real_tokenizer("gpt2"), "gpt2");
}

TEST_CASE("DeepSeek-V3, Gemma 3 and GPT-4o encode and decode as HF does", "[tokenizer][goldens]") {
  for (const std::string name : {"deepseek_v3", "gemma3", "gpt4o"}) {
    SECTION(name) {
      const auto tok = vime::tokenizer::HfTokenizer::from_directory(vime::test::asset_dir(name));
      check_encode_goldens(*tok, name, 500);
      check_decode_goldens(*tok, name, 500);
    }
  }
}

TEST_CASE("Every supported component matches HF on variant tokenizers", "[tokenizer][goldens]") {
  for (const std::string name : {"llama3_bos", "qwen3_added_flags", "llama3_normalizers_digits",
                                 "llama3_split_behaviors", "spm_byte_fallback", "spm_metaspace"}) {
    SECTION(name) {
      const auto tok = vime::test::variant_tokenizer(name);
      check_encode_goldens(*tok, "variants/" + name, 250);
      check_decode_goldens(*tok, "variants/" + name, 250);
    }
  }
}
