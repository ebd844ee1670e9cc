// Hendrycks' MATH answer normalisation (slime math_utils.py: mathd_normalize_answer,
// _strip_string), string for string, including where it gives up and returns its input.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vime::rm {

std::string strip_string(std::string_view text);  // throws StripFailed where Python raises
std::optional<std::string> mathd_normalize_answer(const std::optional<std::string>& answer);

}  // namespace vime::rm
