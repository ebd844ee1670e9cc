#include "common/py_value.hpp"

#include "vime/python_format.hpp"

namespace vime::rm {

std::string python_str(const Json& value) {
  switch (value.type()) {
    case Json::Type::kNull:
      return "None";
    case Json::Type::kBool:
      return value.as_bool() ? "True" : "False";
    case Json::Type::kInt:
      return std::to_string(value.as_int());
    case Json::Type::kDouble:
      return python_float_repr(value.as_double());
    case Json::Type::kString:
      return value.as_string();
    default:
      return value.dump();  // lists and dicts: graders never meet them as labels
  }
}

bool python_truthy(const Json& value) {
  switch (value.type()) {
    case Json::Type::kNull:
      return false;
    case Json::Type::kBool:
      return value.as_bool();
    case Json::Type::kInt:
      return value.as_int() != 0;
    case Json::Type::kDouble:
      return value.as_double() != 0.0;
    case Json::Type::kString:
      return !value.as_string().empty();
    default:
      return value.size() != 0;
  }
}

}  // namespace vime::rm
