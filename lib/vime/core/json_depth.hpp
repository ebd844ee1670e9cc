// The nesting bound of every JSON reader in vime: parsing, converting, dumping and destroying
// recurse once per level, so a body of a million '[' would overflow the stack.
#pragma once

#include <string_view>

namespace vime::core {

// Throws vime::Error naming `where` when `text` nests arrays/objects deeper than 1000 levels
// (Python's json stops at its recursion limit, 1000, too). Json::parse checks it; readers that use
// RapidJSON directly call it first.
void check_json_depth(std::string_view text, std::string_view where);

}  // namespace vime::core
