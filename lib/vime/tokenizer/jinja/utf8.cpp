#include "vime/tokenizer/jinja/utf8.hpp"

#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer::jinja::utf8 {

char32_t next(std::string_view text, size_t& pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = byte(pos);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || pos + len > text.size()) {
    ++pos;
    return c;
  }
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) {
      ++pos;
      return c;
    }
    cp = (cp << 6) | (byte(pos + i) & 0x3F);
  }
  pos += len;
  return cp;
}

void append(std::string& out, char32_t cp) { append_utf8(out, cp); }

size_t count(std::string_view text) {
  size_t n = 0;
  for (size_t pos = 0; pos < text.size(); ++n) next(text, pos);
  return n;
}

std::vector<size_t> offsets(std::string_view text) {
  std::vector<size_t> out;
  out.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    out.push_back(pos);
    next(text, pos);
  }
  out.push_back(text.size());
  return out;
}

bool is_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_word_char(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (c < 0xC0)
    return c == 0xAA || c == 0xB2 || c == 0xB3 || c == 0xB5 || c == 0xB9 || c == 0xBA ||
           (c >= 0xBC && c <= 0xBE);
  if (c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x300 && c <= 0x36F) return false;    // combining marks
  if (c >= 0x2000 && c <= 0x206F) return false;  // general punctuation, spaces, format characters
  if (c >= 0x20A0 && c <= 0x214F)
    return c == 0x2102 || c == 0x2107 || (c >= 0x210A && c <= 0x2113) || c == 0x2115 ||
           (c >= 0x2119 && c <= 0x211D) || c == 0x2124 || c == 0x2126 || c == 0x2128 ||
           (c >= 0x212A && c <= 0x212D) || (c >= 0x212F && c <= 0x2139) ||
           (c >= 0x213C && c <= 0x213F) || (c >= 0x2145 && c <= 0x2149) || c == 0x214E;
  if (c >= 0x2190 && c <= 0x245F)
    return false;  // arrows, math operators, technical, control pictures
  if (c >= 0x2500 && c <= 0x2BFF) return false;  // box drawing, shapes, dingbats, symbols
  if (c >= 0x2E00 && c <= 0x2E7F) return false;
  if (c >= 0x3000 && c <= 0x303F) return c >= 0x3005 && c <= 0x3007;
  if (c >= 0xFE00 && c <= 0xFE0F) return false;  // variation selectors
  if (c >= 0xFE30 && c <= 0xFE4F) return false;
  if (c >= 0xFF00 && c <= 0xFF65) {
    return (c >= 0xFF10 && c <= 0xFF19) || (c >= 0xFF21 && c <= 0xFF3A) ||
           (c >= 0xFF41 && c <= 0xFF5A);
  }
  if (c >= 0x1F000 && c <= 0x1FAFF) return false;  // emoji and pictographs
  if (c >= 0xE0000) return false;  // tags, variation selectors supplement, private use
  return !is_space(c);
}

std::string_view strip(std::string_view text, std::string_view chars, bool left, bool right,
                       bool whitespace_default) {
  std::vector<char32_t> set;
  for (size_t pos = 0; pos < chars.size();) set.push_back(next(chars, pos));
  auto strips = [&](char32_t cp) {
    if (set.empty() && whitespace_default) return is_space(cp);
    for (char32_t c : set) {
      if (c == cp) return true;
    }
    return false;
  };
  size_t begin = 0, end = text.size();
  if (left) {
    while (begin < end) {
      size_t pos = begin;
      if (!strips(next(text, pos))) break;
      begin = pos;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;  // back up to the first byte of the last code point
      while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80 &&
             end - start < 4)
        --start;
      size_t pos = start;
      char32_t cp = next(text, pos);
      if (pos != end) {  // not one well-formed code point: treat the last byte alone
        start = end - 1;
        pos = start;
        cp = next(text, pos);
      }
      if (!strips(cp)) break;
      end = start;
    }
  }
  return text.substr(begin, end - begin);
}

}  // namespace vime::tokenizer::jinja::utf8
