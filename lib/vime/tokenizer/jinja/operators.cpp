#include "vime/tokenizer/jinja/operators.hpp"

#include <cmath>
#include <cstdio>

#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/python_text.hpp"

namespace vime::tokenizer::jinja {
namespace {

int64_t integer_of(const Value& v) { return v.is_bool() ? int64_t{v.as_bool()} : v.as_int(); }
bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  throw type_error("unsupported operand type(s) for " + std::string(op) + ": '" + a.type_name() +
                   "' and '" + b.type_name() + "'");
}

Value repeat(const Value& seq, int64_t times) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  List out;
  for (int64_t i = 0; i < times; ++i)
    out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return seq.kind() == Value::Kind::kTuple ? Value::tuple(std::move(out))
                                           : Value::list(std::move(out));
}

// Python's ints do not overflow; ours are 64-bit and say so rather than wrap.
int64_t checked(bool overflowed, int64_t value) {
  if (overflowed) throw TemplateError("OverflowError", "integer result does not fit in 64 bits");
  return value;
}
int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflowed = __builtin_add_overflow(a, b, &r);
  return checked(overflowed, r);
}
int64_t subtract(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflowed = __builtin_sub_overflow(a, b, &r);
  return checked(overflowed, r);
}
int64_t multiply(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflowed = __builtin_mul_overflow(a, b, &r);
  return checked(overflowed, r);
}

int64_t power(int64_t base, int64_t exponent) {  // by squaring: at most 63 steps before overflow
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = multiply(result, base);
    exponent >>= 1;
    if (exponent > 0) base = multiply(base, base);
  }
  return result;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return subtract(0, a);  // INT64_MIN / -1 would trap
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

double float_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

}  // namespace

void fail_undefined(const Value& undefined) {
  std::string hint = undefined.undefined_hint();
  if (hint.rfind("access to attribute", 0) == 0) throw TemplateError("SecurityError", hint);
  throw undefined_error(hint.empty() ? "an undefined value was used" : hint);
}

Value negate(const Value& v, bool minus) {
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_float()) return Value(minus ? -v.as_float() : v.as_float());
  if (is_integral(v)) return Value(minus ? subtract(0, integer_of(v)) : integer_of(v));
  throw type_error(std::string("bad operand type for unary ") + (minus ? "-" : "+") + ": '" +
                   v.type_name() + "'");
}

Value binary_operation(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value(a.str() + b.str());
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  bool numbers = a.is_number() && b.is_number();
  bool ints = numbers && is_integral(a) && is_integral(b);
  if (op == "+") {
    if (ints) return Value(add(integer_of(a), integer_of(b)));
    if (numbers) return Value(a.to_double() + b.to_double());
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_sequence() && a.kind() == b.kind()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return a.kind() == Value::Kind::kTuple ? Value::tuple(std::move(out))
                                             : Value::list(std::move(out));
    }
    if (a.is_string() || a.is_sequence()) {
      throw type_error("can only concatenate " + a.type_name() + " (not \"" + b.type_name() +
                       "\") to " + a.type_name());
    }
    unsupported("+", a, b);
  }
  if (op == "-") {
    if (ints) return Value(subtract(integer_of(a), integer_of(b)));
    if (numbers) return Value(a.to_double() - b.to_double());
    unsupported("-", a, b);
  }
  if (op == "*") {
    if (ints) return Value(multiply(integer_of(a), integer_of(b)));
    if (numbers) return Value(a.to_double() * b.to_double());
    if ((a.is_string() || a.is_sequence()) && is_integral(b)) return repeat(a, integer_of(b));
    if ((b.is_string() || b.is_sequence()) && is_integral(a)) return repeat(b, integer_of(a));
    if (a.is_string() || a.is_sequence() || b.is_string() || b.is_sequence()) {
      throw type_error("can't multiply sequence by non-int of type '" +
                       (a.is_number() ? a : b).type_name() + "'");
    }
    unsupported("*", a, b);
  }
  if (op == "/") {
    if (!numbers) unsupported("/", a, b);
    if (b.to_double() == 0)
      throw TemplateError("ZeroDivisionError",
                          ints ? "division by zero" : "float division by zero");
    return Value(a.to_double() / b.to_double());
  }
  if (op == "//") {
    if (!numbers) unsupported("//", a, b);
    if (b.to_double() == 0)
      throw TemplateError("ZeroDivisionError", ints ? "integer division or modulo by zero"
                                                    : "float floor division by zero");
    if (ints) return Value(floor_div(integer_of(a), integer_of(b)));
    return Value(std::floor(a.to_double() / b.to_double()));
  }
  if (op == "%") {
    if (a.is_string())
      return Value(
          percent_format(a.as_string(), b.kind() == Value::Kind::kTuple ? b.as_list() : List{b}));
    if (!numbers) unsupported("%", a, b);
    if (b.to_double() == 0)
      throw TemplateError("ZeroDivisionError",
                          ints ? "integer division or modulo by zero" : "float modulo");
    if (ints) {
      int64_t x = integer_of(a), y = integer_of(b);
      return Value(y == -1 ? 0 : x - floor_div(x, y) * y);
    }
    return Value(float_mod(a.to_double(), b.to_double()));
  }
  if (op == "**") {
    if (!numbers) unsupported("** or pow()", a, b);
    if (ints && integer_of(b) >= 0) return Value(power(integer_of(a), integer_of(b)));
    return Value(std::pow(a.to_double(), b.to_double()));
  }
  throw TemplateError("TemplateRuntimeError", "unknown operator " + std::string(op));
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (item.is_undefined()) fail_undefined(item);
      if (!item.is_string()) {
        throw type_error("'in <string>' requires string as left operand, not " + item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (const Value& v : container.as_list()) {
        if (v == item) return true;
      }
      return false;
    case Value::Kind::kDict:
      return container.as_dict().find(item) != nullptr;
    case Value::Kind::kNamespace:
      return container.namespace_attributes().find(item) != nullptr;
    default:
      throw type_error("argument of type '" + container.type_name() + "' is not iterable");
  }
}

std::string percent_format(const std::string& format, const List& args) {
  std::string out;
  size_t next_arg = 0;
  auto take = [&]() -> const Value& {
    if (next_arg >= args.size()) throw type_error("not enough arguments for format string");
    return args[next_arg++];
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) throw TemplateError("ValueError", "incomplete format");
    std::string spec = "%";
    while (i < format.size() &&
           std::string_view("-+ #0123456789.").find(format[i]) != std::string_view::npos)
      spec += format[i++];
    if (i >= format.size()) throw TemplateError("ValueError", "incomplete format");
    char conv = format[i];
    char buf[512];
    switch (conv) {
      case '%':
        out += '%';
        break;
      case 's':
      case 'r': {
        std::string text = conv == 's' ? take().str() : take().repr();
        std::snprintf(buf, sizeof buf, (spec + "s").c_str(),
                      text.c_str());  // width, "-" and precision
        out += spec == "%" ? text : std::string(buf);
        break;
      }
      case 'd':
      case 'i': {
        const Value& v = take();
        if (!v.is_number())
          throw type_error("%" + std::string(1, conv) + " format: a real number is required, not " +
                           v.type_name());
        std::snprintf(buf, sizeof buf, (spec + "lld").c_str(),
                      static_cast<long long>(v.is_float()  ? std::trunc(v.as_float())
                                             : v.is_bool() ? v.as_bool()
                                                           : v.as_int()));
        out += buf;
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'g': {
        const Value& v = take();
        if (!v.is_number()) throw type_error("must be real number, not " + v.type_name());
        std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v.to_double());
        out += buf;
        break;
      }
      case 'x':
      case 'X':
      case 'o': {
        const Value& v = take();
        if (!v.is_int() && !v.is_bool())
          throw type_error("%" + std::string(1, conv) + " format: an integer is required, not " +
                           v.type_name());
        std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(),
                      static_cast<long long>(v.is_bool() ? v.as_bool() : v.as_int()));
        out += buf;
        break;
      }
      default:
        throw TemplateError("ValueError",
                            std::string("unsupported format character '") + conv + "'");
    }
  }
  if (next_arg < args.size())
    throw type_error("not all arguments converted during string formatting");
  return out;
}

}  // namespace vime::tokenizer::jinja
