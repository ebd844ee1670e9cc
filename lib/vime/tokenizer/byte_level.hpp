// GPT-2's reversible byte <-> character map (bytes_to_unicode): byte-level BPE vocabularies store
// each byte as one printable character, e.g. ' ' as 'Ġ'.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::tokenizer {

// The UTF-8 of the character that stands for `byte`.
std::string_view byte_to_chars(unsigned char byte);
std::string bytes_to_chars(std::string_view bytes);
// The bytes a byte-level string stands for, or nullopt when it has a character outside the map.
std::optional<std::string> chars_to_bytes(std::string_view chars);

// GPT-2's pre-tokenizer regex (ByteLevel with use_regex).
inline constexpr const char* kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace vime::tokenizer
