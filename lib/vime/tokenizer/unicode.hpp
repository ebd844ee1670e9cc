// UTF-8 and Unicode helpers the tokenizer pipeline shares: code point iteration, lossy repair of
// invalid UTF-8 (as Rust's String::from_utf8_lossy), character classes as Rust's char methods
// define them, and normalization forms (utf8proc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vime::tokenizer {

// Decodes the code point at `text[pos]`, advancing `pos`; invalid bytes decode as U+FFFD, one byte
// each.
char32_t next_code_point(std::string_view text, size_t& pos);
void append_utf8(std::string& out, char32_t cp);
size_t utf8_length(unsigned char lead);  // 1..4; 1 for a stray continuation or invalid lead byte

bool is_valid_utf8(std::string_view text);
// Replaces each maximal invalid subsequence with U+FFFD (Unicode's "maximal subpart" practice,
// which Rust's from_utf8_lossy follows).
std::string utf8_lossy(std::string_view bytes);

// Rust's char::is_whitespace (White_Space), is_alphanumeric (Alphabetic || Numeric), is_numeric
// (Nd, Nl, No).
bool is_whitespace(char32_t cp);
bool is_numeric(char32_t cp);
bool is_alphanumeric(char32_t cp);

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };
std::string normalize_unicode(std::string_view text, NormalForm form);
std::string to_lower(std::string_view text);  // Rust str::to_lowercase (simple per-char lowercase)

}  // namespace vime::tokenizer
