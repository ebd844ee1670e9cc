#include "vime/core/base64.hpp"

#include <cstdint>

#include "vime/error.hpp"

namespace vime {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 |
                       uint8_t(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[v >> 12 & 63];
    out += rest == 2 ? kAlphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(std::string_view text, const std::string& what) {
  if (text.size() % 4 != 0) {
    throw Error(what + ": not base64 (length " + std::to_string(text.size()) +
                " is not a multiple of 4)");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const int d = k >= 4 - pad ? 0 : value_of(c);
      if (d < 0) {
        throw Error(what + ": not base64 (character '" + std::string(1, c) + "' at " +
                    std::to_string(i + k) + "; the standard alphabet with '=' padding is needed)");
      }
      v = v << 6 | uint32_t(d);
    }
    out += char(v >> 16);
    if (pad < 2) out += char(v >> 8 & 0xff);
    if (pad < 1) out += char(v & 0xff);
  }
  return out;
}

}  // namespace vime
