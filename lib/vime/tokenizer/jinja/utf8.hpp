// Code-point helpers: Python indexes, slices and measures strings by code point, and its
// str.strip()/split() whitespace is Unicode whitespace, so the interpreter needs both on UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vime::tokenizer::jinja::utf8 {

// Decodes the code point at text[pos] and advances pos; invalid bytes decode as themselves.
char32_t next(std::string_view text, size_t& pos);
void append(std::string& out, char32_t cp);
size_t count(std::string_view text);
// Byte offset of every code point, plus text.size() at the end.
std::vector<size_t> offsets(std::string_view text);
// Python's str.isspace() for one code point.
bool is_space(char32_t cp);

// Python's regex \w (str.isalnum() or "_"), with letters and digits told from marks, punctuation
// and symbols by block for the scripts chat data uses.
bool is_word_char(char32_t cp);

// Python's str.strip/lstrip/rstrip: `chars` empty means whitespace, otherwise any of its code
// points.
std::string_view strip(std::string_view text, std::string_view chars, bool left, bool right,
                       bool whitespace_default = true);

}  // namespace vime::tokenizer::jinja::utf8
