// The normalisation of slime's sympy path (math_utils.py: _normalize, split_tuple, _is_frac,
// _str_is_int, should_allow_eval), string for string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vime::rm {

std::optional<std::string> sympy_normalize(const std::optional<std::string>& expr);
std::string strip_properly_formatted_commas(std::string_view expr);
std::vector<std::string> split_tuple(std::string_view expr);
bool is_frac(std::string_view expr);     // "-3/4"-like
bool str_is_int(std::string_view expr);  // float(x) within 1e-7 of an integer
bool should_allow_eval(std::string_view expr);

}  // namespace vime::rm
