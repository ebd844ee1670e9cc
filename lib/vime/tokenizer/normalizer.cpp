#include "vime/tokenizer/normalizer.hpp"

#include <utf8proc.h>

namespace vime::tokenizer {

std::string UnicodeNormalizer::normalize(std::string_view text) const {
  return normalize_unicode(text, form_);
}

std::string LowercaseNormalizer::normalize(std::string_view text) const { return to_lower(text); }

std::string StripNormalizer::normalize(std::string_view text) const {
  size_t begin = 0;
  size_t end = text.size();
  if (left_) {
    while (begin < end) {
      size_t next = begin;
      if (!is_whitespace(next_code_point(text, next))) break;
      begin = next;
    }
  }
  if (right_) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      size_t pos = start;
      if (!is_whitespace(next_code_point(text, pos))) break;
      end = start;
    }
  }
  return std::string(text.substr(begin, end - begin));
}

std::string StripAccentsNormalizer::normalize(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    if (utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_MN) continue;
    out.append(text.substr(start, pos - start));
  }
  return out;
}

std::string ReplaceNormalizer::normalize(std::string_view text) const {
  std::string out;
  size_t last = 0;
  regex_.for_each_match(text, [&](size_t start, size_t end) {
    out.append(text.substr(last, start - last));
    out += content_;
    last = end;
  });
  out.append(text.substr(last));
  return out;
}

std::string PrependNormalizer::normalize(std::string_view text) const {
  if (text.empty()) return {};
  return prepend_ + std::string(text);
}

std::string SequenceNormalizer::normalize(std::string_view text) const {
  std::string current(text);
  for (const auto& step : steps_) current = step->normalize(current);
  return current;
}

}  // namespace vime::tokenizer
