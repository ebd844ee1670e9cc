// Jinja2's builtin tests (tests.py): `x is defined`, `x is string`, `x is divisibleby 3`, ...
#include <map>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/call_args.hpp"
#include "vime/tokenizer/jinja/interpreter.hpp"
#include "vime/tokenizer/jinja/operators.hpp"
#include "vime/tokenizer/jinja/string_ops.hpp"

namespace vime::tokenizer::jinja {
namespace {

const Value& subject(const CallArgs& args) { return args.positional.at(0); }
Value other(const CallArgs& args) { return arg(args, 1, "other"); }

bool integral_of(const Value& v, int64_t& out) {
  if (v.is_int()) return out = v.as_int(), true;
  if (v.is_bool()) return out = v.as_bool(), true;
  return false;
}

bool t_odd(Interpreter&, CallArgs& a) {
  int64_t i;
  if (!integral_of(subject(a), i))
    throw type_error("not all arguments converted during string formatting");
  return i % 2 != 0;
}
bool t_even(Interpreter& in, CallArgs& a) { return !t_odd(in, a); }
bool t_divisibleby(Interpreter&, CallArgs& a) {
  Value r = binary_operation("%", subject(a), arg(a, 1, "num"));
  return !r.truthy();
}
bool t_defined(Interpreter&, CallArgs& a) { return !subject(a).is_undefined(); }
bool t_undefined(Interpreter&, CallArgs& a) { return subject(a).is_undefined(); }
bool t_filter(Interpreter&, CallArgs& a) {
  return subject(a).is_string() && find_filter(subject(a).as_string()) != nullptr;
}
bool t_test(Interpreter&, CallArgs& a) {
  return subject(a).is_string() && find_test(subject(a).as_string()) != nullptr;
}
bool t_none(Interpreter&, CallArgs& a) { return subject(a).is_none(); }
bool t_boolean(Interpreter&, CallArgs& a) { return subject(a).is_bool(); }
bool t_false(Interpreter&, CallArgs& a) { return subject(a).is_bool() && !subject(a).as_bool(); }
bool t_true(Interpreter&, CallArgs& a) { return subject(a).is_bool() && subject(a).as_bool(); }
bool t_integer(Interpreter&, CallArgs& a) { return subject(a).is_int(); }
bool t_float(Interpreter&, CallArgs& a) { return subject(a).is_float(); }
bool t_lower(Interpreter&, CallArgs& a) {
  std::string s = subject(a).str();
  return has_cased(s) && to_lower(s) == s;
}
bool t_upper(Interpreter&, CallArgs& a) {
  std::string s = subject(a).str();
  return has_cased(s) && to_upper(s) == s;
}
bool t_string(Interpreter&, CallArgs& a) { return subject(a).is_string(); }
bool t_mapping(Interpreter&, CallArgs& a) { return subject(a).is_dict(); }
bool t_number(Interpreter&, CallArgs& a) { return subject(a).is_number(); }
bool t_sequence(Interpreter&, CallArgs& a) {
  const Value& v = subject(a);
  return v.is_string() || v.is_sequence() || v.is_dict();
}
bool t_iterable(Interpreter&, CallArgs& a) {
  const Value& v = subject(a);
  return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
}
bool t_callable(Interpreter&, CallArgs& a) { return subject(a).is_callable(); }
bool t_sameas(Interpreter&, CallArgs& a) {
  const Value& x = subject(a);
  Value y = other(a);
  if (x.kind() != y.kind()) return false;
  if (x.is_none() || x.is_undefined()) return true;
  if (x.is_bool()) return x.as_bool() == y.as_bool();
  if (x.is_sequence()) return &x.as_list() == &y.as_list();
  if (x.is_dict()) return &x.as_dict() == &y.as_dict();
  if (x.is_namespace()) return &x.namespace_attributes() == &y.namespace_attributes();
  if (x.is_callable()) return &x.as_callable() == &y.as_callable();
  // Numbers and strings: CPython's `is` agrees with == for the small values templates compare.
  return x == y;
}
bool t_escaped(Interpreter&, CallArgs&) { return false; }
bool t_in(Interpreter&, CallArgs& a) { return contains(arg(a, 1, "seq"), subject(a)); }
bool t_eq(Interpreter&, CallArgs& a) { return subject(a) == other(a); }
bool t_ne(Interpreter&, CallArgs& a) { return !(subject(a) == other(a)); }
int ordered(const CallArgs& a) {
  Value y = other(a);
  if (subject(a).is_undefined()) fail_undefined(subject(a));
  if (y.is_undefined()) fail_undefined(y);
  return compare(subject(a), y);
}
bool t_gt(Interpreter&, CallArgs& a) { return ordered(a) > 0; }
bool t_ge(Interpreter&, CallArgs& a) { return ordered(a) >= 0; }
bool t_lt(Interpreter&, CallArgs& a) { return ordered(a) < 0; }
bool t_le(Interpreter&, CallArgs& a) { return ordered(a) <= 0; }

const std::map<std::string_view, TestFn, std::less<>> kTests = {
    {"odd", t_odd},
    {"even", t_even},
    {"divisibleby", t_divisibleby},
    {"defined", t_defined},
    {"undefined", t_undefined},
    {"filter", t_filter},
    {"test", t_test},
    {"none", t_none},
    {"boolean", t_boolean},
    {"false", t_false},
    {"true", t_true},
    {"integer", t_integer},
    {"float", t_float},
    {"lower", t_lower},
    {"upper", t_upper},
    {"string", t_string},
    {"mapping", t_mapping},
    {"number", t_number},
    {"sequence", t_sequence},
    {"iterable", t_iterable},
    {"callable", t_callable},
    {"sameas", t_sameas},
    {"escaped", t_escaped},
    {"in", t_in},
    {"==", t_eq},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"!=", t_ne},
    {"ne", t_ne},
    {">", t_gt},
    {"gt", t_gt},
    {"greaterthan", t_gt},
    {">=", t_ge},
    {"ge", t_ge},
    {"<", t_lt},
    {"lt", t_lt},
    {"lessthan", t_lt},
    {"<=", t_le},
    {"le", t_le},
};

}  // namespace

TestFn find_test(std::string_view name) {
  auto it = kTests.find(name);
  return it == kTests.end() ? nullptr : it->second;
}

}  // namespace vime::tokenizer::jinja
