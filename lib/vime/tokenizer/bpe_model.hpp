// HF's BPE model: a word (one pre-token) becomes ids by starting from its characters (or, for
// byte-level vocabularies, its bytes) and applying the lowest-ranked merge first, leftmost on ties.
// Repeated words are served from a per-thread cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vime/tokenizer/pair_map.hpp"

namespace vime::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using TokenIdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct BpeOptions {
  // The vocabulary is byte-level (a ByteLevel pre-tokenizer maps bytes to GPT-2's characters): the
  // model then works on raw bytes, and the byte mapping costs nothing at encode time.
  bool byte_level = false;
  bool ignore_merges = false;  // a word that is itself in the vocabulary is one token
  bool byte_fallback = false;  // unknown characters become <0xXX> tokens
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class BpeModel {
 public:
  // `vocab` maps token strings as the file writes them to ids; `merges` are pairs in rank order.
  // Throws vime::Error when a merge names a token that is not in the vocabulary.
  BpeModel(TokenIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options);

  // Appends the ids of one pre-token (raw bytes for a byte-level model).
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The token as the file writes it; empty for an id outside the vocabulary.
  std::string_view id_to_token(int32_t id) const;
  size_t vocab_size() const { return vocab_.size(); }
  const TokenIdMap& vocab() const { return vocab_; }
  const BpeOptions& options() const { return options_; }

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;
  void push_unknown(std::string_view unit, std::vector<int32_t>& symbols, bool& last_was_unk) const;

  BpeOptions options_;
  TokenIdMap vocab_;       // token as written -> id
  TokenIdMap unit_vocab_;  // token in the model's working units (bytes when byte_level) -> id
  std::vector<std::string> id_to_token_;
  int32_t byte_ids_[256];  // byte-level: the id of each single byte
  int32_t byte_fallback_ids_[256];
  std::optional<int32_t> unk_id_;
  PairMap merges_;
  uint64_t cache_key_;  // identifies this model's per-thread word cache
};

}  // namespace vime::tokenizer
