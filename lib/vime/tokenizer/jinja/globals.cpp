// Globals of transformers' environment: Jinja2's range (capped by the sandbox), dict, namespace,
// cycler, joiner, plus transformers' raise_exception and strftime_now.
#include <ctime>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/call_args.hpp"
#include "vime/tokenizer/jinja/interpreter.hpp"

namespace vime::tokenizer::jinja {
namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

int64_t int_of(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  throw type_error("'" + v.type_name() + "' object cannot be interpreted as an integer");
}

Value g_range(Interpreter&, CallArgs& args) {
  int64_t start = 0, stop, step = 1;
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3)
    throw type_error("range expected at most 3 arguments, got " + std::to_string(p.size()));
  if (p.size() == 1) {
    stop = int_of(p[0]);
  } else {
    start = int_of(p[0]);
    stop = int_of(p[1]);
    if (p.size() == 3) step = int_of(p[2]);
  }
  if (step == 0) throw TemplateError("ValueError", "range() arg 3 must not be zero");
  int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                           : (start > stop ? (start - stop - step - 1) / -step : 0);
  if (count > kMaxRange) {
    throw TemplateError("OverflowError",
                        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  List out;
  for (int64_t i = 0; i < count; ++i) out.emplace_back(start + i * step);
  return Value::list(std::move(out));
}

Dict keyword_dict(const CallArgs& args) {
  Dict d;
  if (!args.positional.empty()) {
    const Value& first = args.positional[0];
    if (first.is_dict()) {
      d = first.as_dict();
    } else {
      for (const Value& pair : iterate(first)) {
        List kv = iterate(pair);
        if (kv.size() != 2)
          throw TemplateError("ValueError", "dictionary update sequence element has length " +
                                                std::to_string(kv.size()) + "; 2 is required");
        d.set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : args.keyword) d.set(Value(k), v);
  return d;
}

Value g_dict(Interpreter&, CallArgs& args) { return Value::dict(keyword_dict(args)); }
Value g_namespace(Interpreter&, CallArgs& args) {
  return Value::namespace_object(keyword_dict(args));
}

Value g_raise_exception(Interpreter&, CallArgs& args) {
  throw TemplateError("TemplateError", arg(args, 0, "message").str());
}

Value g_strftime_now(Interpreter&, CallArgs& args) {
  std::string format = expect_string(arg(args, 0, "format"), "strftime() argument 1");
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[512];
  size_t n = std::strftime(buf, sizeof buf, format.c_str(), &local);
  return Value(std::string(buf, n));
}

Value g_joiner(Interpreter&, CallArgs& args) {
  std::string separator = arg(args, 0, "sep", Value(", ")).str();
  auto used = std::make_shared<bool>(false);
  return Value::callable("joiner", [separator, used](Interpreter&, CallArgs&) {
    if (!*used) {
      *used = true;
      return Value("");
    }
    return Value(separator);
  });
}

Value g_cycler(Interpreter&, CallArgs& args) {
  auto items = std::make_shared<List>(args.positional);
  auto position = std::make_shared<size_t>(0);
  Dict d;
  d.set(Value("next"), Value::callable("next", [items, position](Interpreter&, CallArgs&) {
          if (items->empty()) return Value::none();
          Value v = (*items)[*position % items->size()];
          ++*position;
          return v;
        }));
  d.set(Value("reset"), Value::callable("reset", [position](Interpreter&, CallArgs&) {
          *position = 0;
          return Value::none();
        }));
  return Value::namespace_object(std::move(d));
}

}  // namespace

Value find_global(std::string_view name) {
  static const std::pair<std::string_view, Builtin> kGlobals[] = {
      {"range", g_range},
      {"dict", g_dict},
      {"namespace", g_namespace},
      {"raise_exception", g_raise_exception},
      {"strftime_now", g_strftime_now},
      {"joiner", g_joiner},
      {"cycler", g_cycler},
  };
  for (const auto& [global_name, fn] : kGlobals) {
    if (global_name == name) return Value::callable(std::string(name), fn);
  }
  return Value();
}

}  // namespace vime::tokenizer::jinja
