// Incremental detokenization: streaming every golden's ids token by token gives the full decode.
#include "vime/tokenizer/decode_stream.hpp"

#include <catch2/catch.hpp>

#include "tokenizer/tokenizer_fixtures.hpp"

namespace {

using vime::tokenizer::DecodeStream;

std::string stream_all(const vime::tokenizer::HfTokenizer& tok, const std::vector<int32_t>& ids,
                       bool skip) {
  DecodeStream stream(tok, skip);
  std::string text;
  for (int32_t id : ids) {
    if (auto piece = stream.step(id)) text += *piece;
  }
  return text;
}

}  // namespace

TEST_CASE("DecodeStream holds back a character until its last byte arrives",
          "[tokenizer][stream]") {
  const auto& qwen = vime::test::real_tokenizer("qwen3");
  const auto ids = qwen.encode("a𓀀");
  REQUIRE(ids.size() == 4);  // 'a', then the hieroglyph's four bytes over three tokens
  DecodeStream stream(qwen);
  CHECK(stream.step(ids[0]) == "a");
  for (size_t i = 1; i + 1 < ids.size(); ++i) CHECK_FALSE(stream.step(ids[i]).has_value());
  CHECK(stream.step(ids.back()) == "𓀀");
}

TEST_CASE("Streaming every golden token by token gives the full decode", "[tokenizer][stream]") {
  for (const std::string name : {"qwen3", "llama3", "gpt2"}) {
    const auto& tok = vime::test::real_tokenizer(name);
    size_t mismatches = 0, checked = 0;
    for (const auto& g : vime::test::read_golden(name + "_encode.jsonl")) {
      std::vector<int32_t> ids;
      for (const auto& id : g.at("ids_special").as_array())
        ids.push_back(static_cast<int32_t>(id.as_int()));
      for (bool skip : {false, true}) {
        const std::string full = tok.decode_text(ids, skip, false);
        if (full.ends_with("\xEF\xBF\xBD")) continue;  // a stream never ends on a broken character
        ++checked;
        if (stream_all(tok, ids, skip) != full && ++mismatches <= 3) {
          UNSCOPED_INFO(name << ": " << g.at("text").dump());
        }
      }
    }
    INFO(name << ": " << mismatches << " of " << checked << " streams differ");
    CHECK(checked > 4000);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("Streaming a SentencePiece-style tokenizer keeps its spaces", "[tokenizer][stream]") {
  for (const std::string name : {"spm_byte_fallback", "spm_metaspace"}) {
    const auto tok = vime::test::variant_tokenizer(name);
    for (const auto& g : vime::test::read_golden("variants/" + name + "_encode.jsonl")) {
      std::vector<int32_t> ids;
      for (const auto& id : g.at("ids").as_array())
        ids.push_back(static_cast<int32_t>(id.as_int()));
      const std::string full = tok->decode_text(ids, false, false);
      if (full.ends_with("\xEF\xBF\xBD")) continue;
      INFO(name << ": " << g.at("text").dump());
      CHECK(stream_all(*tok, ids, false) == full);
    }
  }
}
