// Incremental detokenization for streaming generation, as HF's DecodeStream does it: feed ids one
// at a time, get the new text each completes. A token that ends inside a multi-byte character
// yields nothing until the character is whole, and byte-level spaces merge correctly with what
// follows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vime::tokenizer {

class HfTokenizer;

class DecodeStream {
 public:
  // `tokenizer` must outlive the stream.
  explicit DecodeStream(const HfTokenizer& tokenizer, bool skip_special_tokens = false)
      : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

  // The text `id` adds, or nullopt when it adds none yet (an incomplete character, a skipped
  // token).
  std::optional<std::string> step(int32_t id);

 private:
  const HfTokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> ids_;  // the ids since the last emitted boundary, the prefix among them
  std::string prefix_;        // the decode of ids_[0, prefix_index_)
  size_t prefix_index_ = 0;
};

}  // namespace vime::tokenizer
