#include "vime/tokenizer/added_vocabulary.hpp"

#include <utf8proc.h>

#include <algorithm>

#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

// Rust regex's \w: alphanumeric, marks, connector punctuation (such as '_'), joiners.
bool is_word_char(char32_t cp) {
  if (is_alphanumeric(cp) || cp == 0x200C || cp == 0x200D) return true;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_PC;
}

char32_t last_code_point(std::string_view text, size_t& start) {
  start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  size_t pos = start;
  return next_code_point(text, pos);
}

bool ends_with_word(std::string_view text) {
  if (text.empty()) return false;
  size_t start = 0;
  return is_word_char(last_code_point(text, start));
}

bool starts_with_word(std::string_view text) {
  if (text.empty()) return false;
  size_t pos = 0;
  return is_word_char(next_code_point(text, pos));
}

// Where the trailing whitespace of `text` begins.
size_t space_leftmost_at_end(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = 0;
    if (!is_whitespace(last_code_point(text.substr(0, end), start))) break;
    end = start;
  }
  return end;
}

// How many bytes of whitespace `text` starts with.
size_t space_rightmost_at_start(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!is_whitespace(next_code_point(text, next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens,
                                     std::vector<std::string> patterns,
                                     std::vector<size_t> token_index) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& pattern = patterns[i];
    if (pattern.empty()) continue;
    int32_t node = 0;
    for (char c : pattern) {
      const auto byte = static_cast<unsigned char>(c);
      int32_t child = -1;
      for (const auto& [b, index] : nodes_[node].children) {
        if (b == byte) child = index;
      }
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        nodes_[node].children.emplace_back(byte, child);
        nodes_.emplace_back();
      }
      node = child;
    }
    if (nodes_[node].token < 0) {  // the first token with this content wins, as in HF's trie
      nodes_[node].token = static_cast<int32_t>(tokens_.size());
      tokens_.push_back(tokens[token_index[i]]);
    }
    first_byte_[static_cast<unsigned char>(pattern[0])] = true;
  }
}

std::pair<size_t, int32_t> AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  std::pair<size_t, int32_t> best{pos, -1};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int32_t child = -1;
    for (const auto& [b, index] : nodes_[node].children) {
      if (b == byte) {
        child = index;
        break;
      }
    }
    if (child < 0) break;
    node = child;
    if (nodes_[node].token >= 0) best = {i + 1, nodes_[node].token};
  }
  return best;
}

void AddedTokenMatcher::split(std::string_view text, FunctionRef<void(std::string_view)> on_text,
                              FunctionRef<void(int32_t)> on_token) const {
  size_t emitted = 0;  // text before this is handed on
  size_t search = 0;
  if (!empty()) {
    while (search < text.size()) {
      size_t start = search;
      std::pair<size_t, int32_t> match{0, -1};
      for (; start < text.size(); ++start) {
        if (!first_byte_[static_cast<unsigned char>(text[start])]) continue;
        match = longest_at(text, start);
        if (match.second >= 0) break;
      }
      if (match.second < 0) break;
      size_t stop = match.first;
      search = stop;  // the next match is looked for after this one, even when this one is skipped
      const AddedToken& token = tokens_[static_cast<size_t>(match.second)];
      if (token.single_word) {
        const bool space_before = start == 0 || !ends_with_word(text.substr(0, start));
        const bool space_after = stop == text.size() || !starts_with_word(text.substr(stop));
        if (!space_before || !space_after) continue;
      }
      if (token.lstrip) start = std::max(space_leftmost_at_end(text.substr(0, start)), emitted);
      if (token.rstrip) stop += space_rightmost_at_start(text.substr(stop));
      if (emitted < start) on_text(text.substr(emitted, start - emitted));
      on_token(token.id);
      emitted = stop;
    }
  }
  if (emitted < text.size()) on_text(text.substr(emitted));
}

}  // namespace vime::tokenizer
