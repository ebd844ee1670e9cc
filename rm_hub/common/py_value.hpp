// Python's view of a JSON value, for graders that call str(label) or test `if not label`.
#pragma once

#include <string>

#include "vime/json.hpp"

namespace vime::rm {

std::string python_str(const Json& value);  // str(): 42 -> "42", 0.5 -> "0.5", true -> "True"
bool python_truthy(const Json& value);      // bool(): "", 0, 0.0, None, [], {} are false

}  // namespace vime::rm
