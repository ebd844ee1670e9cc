// Python str operations the methods and filters share. Case mapping covers Latin, Greek, Cyrillic
// and fullwidth Latin (Python's full Unicode tables are not carried); other text is unchanged.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vime::tokenizer::jinja {

std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
std::string to_title(std::string_view s);        // str.title()
std::string to_capitalized(std::string_view s);  // str.capitalize()
bool has_cased(std::string_view s);              // any character with a case
// str.split(sep, maxsplit) / rsplit; no sep splits on whitespace runs and drops empty parts.
std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep,
                               int64_t maxsplit, bool from_right = false);
std::vector<std::string> splitlines(std::string_view s, bool keepends = false);
std::string replace(std::string_view s, std::string_view old, std::string_view replacement,
                    int64_t count = -1);
// str.find in code points (-1 when absent).
int64_t find_substring(std::string_view s, std::string_view sub, bool from_right = false);
int64_t count_substring(std::string_view s, std::string_view sub);

}  // namespace vime::tokenizer::jinja
