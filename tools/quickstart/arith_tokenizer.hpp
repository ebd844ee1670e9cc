// The quickstart's tokenizer: a real HF tokenizer.json (byte-level BPE, so any text round-trips)
// whose only merges build a few whole-word tokens: "\boxed{" and the calculator plugin's tags.
// Digits stay one token each. Special tokens: <|endoftext|> (EOS and pad), <|im_start|>,
// <|im_end|>. No torch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vime::quickstart {

struct ArithTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  int64_t vocab_size = 0;  // len(tokenizer): byte tokens + merged tokens + special tokens
  int64_t eos_token_id = 0;
};

// `extra_words` become single tokens too (the search task's <search>, </search>, ...).
ArithTokenizerFiles make_arith_tokenizer(std::span<const std::string_view> extra_words = {});

}  // namespace vime::quickstart
