#include "vime/tokenizer/byte_level.hpp"

#include <array>
#include <cstdint>

#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

struct ByteTable {
  std::array<std::string, 256> to_chars;
  std::array<int16_t, 324> to_byte;  // code point -> byte; the map's code points are all < 324
  ByteTable() {
    to_byte.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
      append_utf8(to_chars[b], cp);
      to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

}  // namespace

std::string_view byte_to_chars(unsigned char byte) { return table().to_chars[byte]; }

std::string bytes_to_chars(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += table().to_chars[static_cast<unsigned char>(c)];
  return out;
}

std::optional<std::string> chars_to_bytes(std::string_view chars) {
  const auto& t = table();
  std::string out;
  out.reserve(chars.size());
  size_t pos = 0;
  while (pos < chars.size()) {
    const char32_t cp = next_code_point(chars, pos);
    if (cp >= t.to_byte.size() || t.to_byte[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(t.to_byte[cp]));
  }
  return out;
}

}  // namespace vime::tokenizer
