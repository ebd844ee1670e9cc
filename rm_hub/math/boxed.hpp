// \boxed{...} extraction (slime math_utils.py: last_boxed_only_string, remove_boxed,
// extract_answer).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::rm {

// The last "\boxed..." (else "\fbox...") through its balancing '}', or nullopt when unbalanced.
std::optional<std::string> last_boxed_only_string(std::string_view text);
// "\boxed{X}" -> "X"; anything else (e.g. "\fbox{X}") -> nullopt.
std::optional<std::string> remove_boxed(const std::optional<std::string>& boxed);
// extract_answer: remove_boxed(last_boxed_only_string(text)) when text has "\boxed", else nullopt.
std::optional<std::string> extract_boxed_answer(std::string_view text);

}  // namespace vime::rm
