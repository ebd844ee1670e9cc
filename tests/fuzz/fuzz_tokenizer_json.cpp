// tokenizer.json from a model directory: HfTokenizer::from_json builds a tokenizer or throws
// vime::Error; one that builds encodes and decodes text without crashing.
#include <string>

#include "fuzz_harness.hpp"
#include "vime/error.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<vime::tokenizer::HfTokenizer> tokenizer;
  try {
    tokenizer = vime::tokenizer::HfTokenizer::from_json(
        std::string_view(reinterpret_cast<const char*>(data), size), {}, "fuzz");
  } catch (const vime::Error&) {
    return 0;
  }
  try {
    const auto ids =
        tokenizer->encode("Hello, world! 12+34= \xe4\xbd\xa0\xe5\xa5\xbd <|im_end|>", true);
    (void)tokenizer->decode(ids, false);
    const std::vector<int32_t> some = {0, 1, 2, 3, 100, 1000000, -1};
    (void)tokenizer->decode(some, true);
  } catch (const vime::Error&) {
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"\"model\"",
          "\"BPE\"",
          "\"vocab\"",
          "\"merges\"",
          "\"added_tokens\"",
          "\"normalizer\"",
          "\"pre_tokenizer\"",
          "\"decoder\"",
          "\"post_processor\"",
          "\"ByteLevel\"",
          "\"Split\"",
          "\"Sequence\"",
          "\"NFC\"",
          "\"Regex\"",
          "\"TemplateProcessing\"",
          "\"id\"",
          "\"content\"",
          "\"special\"",
          "\"pattern\"",
          "\"(?i)\"",
          "\"\\\\p{L}+\"",
          "\"[\"",
          "\"(\"",
          "null",
          "true",
          "-1",
          "2147483648",
          "\"byte_fallback\"",
          "\"ignore_merges\""};
}
