#include "vime/retrieval/text_analyzer.hpp"

#include <algorithm>
#include <array>

namespace vime::retrieval {
namespace {

// Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, sorted.
constexpr std::array<std::string_view, 33> kStopWords = {
    "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
    "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with"};

bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

}  // namespace

std::vector<std::string> analyze(std::string_view text) {
  std::vector<std::string> terms;
  std::string term;
  auto flush = [&] {
    if (!term.empty() && !std::binary_search(kStopWords.begin(), kStopWords.end(), term)) {
      terms.push_back(term);
    }
    term.clear();
  };
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_word_byte(c)) {
      flush();
      continue;
    }
    term.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
  }
  flush();
  return terms;
}

}  // namespace vime::retrieval
