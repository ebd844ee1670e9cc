// Added tokens (special tokens such as <|im_start|>, and user-added ones): found in the text before
// any normalization or BPE, leftmost-longest, with HF's single_word / lstrip / rstrip rules. Tokens
// marked `normalized` are looked for in the normalized text instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vime/tokenizer/function_ref.hpp"

namespace vime::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// A byte trie over the contents of some added tokens.
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is looked for on behalf of `tokens[token_index[i]]`.
  AddedTokenMatcher(const std::vector<AddedToken>& tokens, std::vector<std::string> patterns,
                    std::vector<size_t> token_index);

  // Cuts `text` into plain pieces (on_text) and added tokens (on_token with the token's id); the
  // stripped spaces of lstrip/rstrip tokens belong to the token.
  void split(std::string_view text, FunctionRef<void(std::string_view)> on_text,
             FunctionRef<void(int32_t)> on_token) const;
  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;
    int32_t token = -1;  // index into tokens_ of the pattern ending here
  };
  // The longest pattern starting at `pos`: its end and token index, or token -1.
  std::pair<size_t, int32_t> longest_at(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_{1};
  bool first_byte_[256] = {};
};

}  // namespace vime::tokenizer
