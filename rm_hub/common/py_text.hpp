// Python str semantics the graders rely on (slime's graders are Python): replace, split, strip,
// float(), int-ness and code-point length, on UTF-8 std::string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vime::rm {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to);
std::vector<std::string> split(std::string_view text, std::string_view sep);  // str.split(sep)
std::vector<std::string> split_whitespace(std::string_view text);             // str.split()
std::string strip(std::string_view text);                                     // str.strip()
std::string lower(
    std::string_view text);  // str.lower() for ASCII letters and the common Latin-1/Greek range
bool contains(std::string_view text, std::string_view needle);

size_t utf8_length(std::string_view text);                     // len(str): code points
size_t utf8_char_size(std::string_view text, size_t i);        // bytes of the code point at byte i
std::string utf8_last_chars(std::string_view text, size_t n);  // text[-n:]

// float(text): accepts what Python does (spaces, sign, inf/nan, 1_000, 1e5); nullopt otherwise.
std::optional<double> python_float(std::string_view text);
// abs(x - int(round(x))) <= 1e-7, false for inf/nan (Python raises there).
bool python_is_int(double x);
// str(int(round(x))) / str(int(x)) for finite x, exact for any magnitude like Python's int.
std::string python_round_int_str(double x);
std::string python_trunc_int_str(double x);

// Unicode-aware str.isalpha() for one code point.
bool is_alpha_codepoint(char32_t cp);
char32_t decode_utf8(std::string_view text, size_t i);

}  // namespace vime::rm
