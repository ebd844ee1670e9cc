// Methods templates call on values: Python's str, dict and list methods that do not mutate.
// Mutating ones (list.append, dict.update, ...) raise SecurityError, as the immutable sandbox does.
#include <algorithm>
#include <set>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/call_args.hpp"
#include "vime/tokenizer/jinja/interpreter.hpp"
#include "vime/tokenizer/jinja/string_ops.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

using Method = Value (*)(const Value& self, CallArgs& args);

std::optional<std::string> optional_string(const Value& v, std::string_view what) {
  if (v.is_none() || v.is_undefined()) return std::nullopt;
  return expect_string(v, what);
}

int64_t int_arg(const Value& v, int64_t fallback) {
  if (v.is_undefined() || v.is_none()) return fallback;
  if (!v.is_int() && !v.is_bool())
    throw type_error("'" + v.type_name() + "' object cannot be interpreted as an integer");
  return v.is_bool() ? v.as_bool() : v.as_int();
}

Value fix_affix(const Value& self, CallArgs& args, bool at_start) {
  const std::string& s = self.as_string();
  Value affix = arg(args, 0, "prefix");
  List candidates = affix.kind() == Value::Kind::kTuple ? affix.as_list() : List{affix};
  for (const Value& c : candidates) {
    const std::string& text =
        expect_string(c, at_start ? "startswith first arg" : "endswith first arg");
    bool hit = at_start ? s.compare(0, text.size(), text) == 0
                        : s.size() >= text.size() &&
                              s.compare(s.size() - text.size(), text.size(), text) == 0;
    if (hit) return Value(true);
  }
  return Value(false);
}

Value strip_method(const Value& self, CallArgs& args, bool left, bool right) {
  auto chars = optional_string(arg(args, 0, "chars"), "strip arg");
  return Value(utf8::strip(self.as_string(), chars.value_or(""), left, right, !chars.has_value()));
}

List to_values(const std::vector<std::string>& parts) {
  List out;
  for (const auto& p : parts) out.emplace_back(p);
  return out;
}

Value split_method(const Value& self, CallArgs& args, bool from_right) {
  auto sep = optional_string(arg(args, 0, "sep"), "must be str or None");
  if (sep && sep->empty()) throw TemplateError("ValueError", "empty separator");
  std::optional<std::string_view> sep_view;
  if (sep) sep_view = *sep;
  return Value::list(to_values(
      split(self.as_string(), sep_view, int_arg(arg(args, 1, "maxsplit"), -1), from_right)));
}

// str.format with automatic ({}), positional ({0}) and keyword ({name}) fields; no format specs.
Value format_method(const Value& self, CallArgs& args) {
  const std::string& f = self.as_string();
  std::string out;
  size_t next_auto = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    if (f[i] == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (f[i] != '{') {
      out += f[i];
      continue;
    }
    size_t close = f.find('}', i);
    if (close == std::string::npos)
      throw TemplateError("ValueError", "Single '{' encountered in format string");
    std::string field = f.substr(i + 1, close - i - 1);
    if (field.find(':') != std::string::npos || field.find('!') != std::string::npos) {
      throw TemplateError("ValueError",
                          "format specs are not supported in str.format: {" + field + "}");
    }
    const Value* v = nullptr;
    if (field.empty()) {
      if (next_auto >= args.positional.size())
        throw TemplateError("IndexError", "Replacement index " + std::to_string(next_auto) +
                                              " out of range for positional args tuple");
      v = &args.positional[next_auto++];
    } else if (std::all_of(field.begin(), field.end(),
                           [](char c) { return c >= '0' && c <= '9'; })) {
      size_t index = std::stoul(field);
      if (index >= args.positional.size())
        throw TemplateError(
            "IndexError", "Replacement index " + field + " out of range for positional args tuple");
      v = &args.positional[index];
    } else {
      v = args.keyword_arg(field);
      if (v == nullptr) throw TemplateError("KeyError", "'" + field + "'");
    }
    out += v->str();
    i = close;
  }
  return Value(std::move(out));
}

Value join_method(const Value& self, CallArgs& args) {
  List items = iterate(arg(args, 0, "iterable"));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      throw type_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                       items[i].type_name() + " found");
    }
    if (i > 0) out += self.as_string();
    out += items[i].as_string();
  }
  return Value(std::move(out));
}

template <class Pred>
Value all_chars(const Value& self, Pred pred) {
  const std::string& s = self.as_string();
  if (s.empty()) return Value(false);
  for (size_t pos = 0; pos < s.size();) {
    if (!pred(utf8::next(s, pos))) return Value(false);
  }
  return Value(true);
}

Value string_method(const Value& self, std::string_view name, CallArgs& args) {
  const std::string& s = self.as_string();
  if (name == "startswith") return fix_affix(self, args, true);
  if (name == "endswith") return fix_affix(self, args, false);
  if (name == "strip") return strip_method(self, args, true, true);
  if (name == "lstrip") return strip_method(self, args, true, false);
  if (name == "rstrip") return strip_method(self, args, false, true);
  if (name == "split") return split_method(self, args, false);
  if (name == "rsplit") return split_method(self, args, true);
  if (name == "splitlines")
    return Value::list(to_values(splitlines(s, arg(args, 0, "keepends").truthy())));
  if (name == "upper") return Value(to_upper(s));
  if (name == "lower") return Value(to_lower(s));
  if (name == "title") return Value(to_title(s));
  if (name == "capitalize") return Value(to_capitalized(s));
  if (name == "replace") {
    return Value(replace(s, expect_string(arg(args, 0, "old"), "replace() argument 1"),
                         expect_string(arg(args, 1, "new"), "replace() argument 2"),
                         int_arg(arg(args, 2, "count"), -1)));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    int64_t at =
        find_substring(s, expect_string(arg(args, 0, "sub"), "must be str"), name[0] == 'r');
    if (at < 0 && (name == "index" || name == "rindex"))
      throw TemplateError("ValueError", "substring not found");
    return Value(at);
  }
  if (name == "count")
    return Value(count_substring(s, expect_string(arg(args, 0, "sub"), "must be str")));
  if (name == "join") return join_method(self, args);
  if (name == "format") return format_method(self, args);
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string affix = expect_string(arg(args, 0, "prefix"), "must be str");
    if (name == "removeprefix" && s.compare(0, affix.size(), affix) == 0)
      return Value(s.substr(affix.size()));
    if (name == "removesuffix" && !affix.empty() && s.size() >= affix.size() &&
        s.compare(s.size() - affix.size(), affix.size(), affix) == 0) {
      return Value(s.substr(0, s.size() - affix.size()));
    }
    return self;
  }
  if (name == "ljust" || name == "rjust" || name == "center" || name == "zfill") {
    const int64_t width = int_arg(arg(args, 0, "width"), 0);
    const int64_t length = static_cast<int64_t>(utf8::count(s));
    if (width <= length) return self;
    const int64_t pad = width - length;
    if (name == "zfill") {
      size_t sign = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
      return Value(s.substr(0, sign) + std::string(pad, '0') + s.substr(sign));
    }
    std::string fill = name == "zfill" ? "0" : arg(args, 1, "fillchar", Value(" ")).str();
    if (utf8::count(fill) != 1)
      throw type_error("The fill character must be exactly one character long");
    auto repeat = [&](int64_t n) {
      std::string out;
      for (int64_t i = 0; i < n; ++i) out += fill;
      return out;
    };
    if (name == "ljust") return Value(s + repeat(pad));
    if (name == "rjust") return Value(repeat(pad) + s);
    const int64_t left = pad / 2 + (pad & width & 1);  // CPython's str.center
    return Value(repeat(left) + s + repeat(pad - left));
  }
  if (name == "partition" || name == "rpartition") {
    const std::string sep = expect_string(arg(args, 0, "sep"), "must be str");
    if (sep.empty()) throw TemplateError("ValueError", "empty separator");
    size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (at == std::string::npos) {
      return name == "partition" ? Value::tuple({Value(s), Value(""), Value("")})
                                 : Value::tuple({Value(""), Value(""), Value(s)});
    }
    return Value::tuple({Value(s.substr(0, at)), Value(sep), Value(s.substr(at + sep.size()))});
  }
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
    return all_chars(self, [](char32_t c) { return c >= '0' && c <= '9'; });
  if (name == "isalpha")
    return all_chars(self, [](char32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
    });
  if (name == "isalnum")
    return all_chars(self, [](char32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c >= 0x80;
    });
  if (name == "isspace") return all_chars(self, utf8::is_space);
  if (name == "islower") return Value(has_cased(s) && to_lower(s) == s);
  if (name == "isupper") return Value(has_cased(s) && to_upper(s) == s);
  throw TemplateError("AttributeError",
                      "'str' object has no attribute '" + std::string(name) + "'");
}

Value dict_method(const Value& self, std::string_view name, CallArgs& args) {
  const Dict& d = self.as_dict();
  if (name == "items") {
    List out;
    for (const auto& [k, v] : d.items) out.push_back(Value::tuple({k, v}));
    return Value::list(std::move(out));
  }
  if (name == "keys" || name == "values") {
    List out;
    for (const auto& [k, v] : d.items) out.push_back(name == "keys" ? k : v);
    return Value::list(std::move(out));
  }
  if (name == "get") {
    const Value* v = d.find(arg(args, 0, "key"));
    return v ? *v : arg(args, 1, "default", Value::none());
  }
  if (name == "copy") return Value::dict(d);
  throw TemplateError("AttributeError",
                      "'dict' object has no attribute '" + std::string(name) + "'");
}

Value list_method(const Value& self, std::string_view name, CallArgs& args) {
  const List& items = self.as_list();
  Value x = arg(args, 0, "value");
  if (name == "count")
    return Value(static_cast<int64_t>(std::count(items.begin(), items.end(), x)));
  if (name == "index") {
    auto it = std::find(items.begin(), items.end(), x);
    if (it == items.end()) throw TemplateError("ValueError", x.repr() + " is not in list");
    return Value(static_cast<int64_t>(it - items.begin()));
  }
  if (name == "copy") return Value::list(items);
  throw TemplateError("AttributeError", "'" + self.type_name() + "' object has no attribute '" +
                                            std::string(name) + "'");
}

const std::set<std::string_view, std::less<>> kStringMethods = {
    "startswith", "endswith",   "strip",        "lstrip",       "rstrip",    "split",
    "rsplit",     "splitlines", "upper",        "lower",        "title",     "capitalize",
    "replace",    "find",       "rfind",        "index",        "rindex",    "count",
    "join",       "format",     "removeprefix", "removesuffix", "isdigit",   "isnumeric",
    "isdecimal",  "isalpha",    "isalnum",      "isspace",      "islower",   "isupper",
    "ljust",      "rjust",      "center",       "zfill",        "partition", "rpartition"};
const std::set<std::string_view, std::less<>> kDictMethods = {"items", "keys", "values", "get",
                                                              "copy"};
const std::set<std::string_view, std::less<>> kDictMutators = {"pop", "popitem", "setdefault",
                                                               "update", "clear"};
const std::set<std::string_view, std::less<>> kListMethods = {"count", "index", "copy"};
const std::set<std::string_view, std::less<>> kListMutators = {
    "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};

Value unsafe(const Value& self, std::string_view name) {
  // Jinja2's sandbox hands back an Undefined that prints as "" and raises SecurityError on use.
  return Value::undefined("access to attribute '" + std::string(name) + "' of '" +
                          self.type_name() + "' object is unsafe.");
}

}  // namespace

Value find_method(const Value& self, std::string_view name) {
  std::string method(name);
  auto bind = [&](Value (*fn)(const Value&, std::string_view, CallArgs&)) {
    return Value::callable(method, [self, method, fn](Interpreter&, CallArgs& args) {
      return fn(self, method, args);
    });
  };
  switch (self.kind()) {
    case Value::Kind::kString:
      if (kStringMethods.count(name)) return bind(string_method);
      break;
    case Value::Kind::kDict:
      if (kDictMethods.count(name)) return bind(dict_method);
      if (kDictMutators.count(name)) return unsafe(self, name);
      break;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      if (kListMethods.count(name)) return bind(list_method);
      if (self.kind() == Value::Kind::kList && kListMutators.count(name)) return unsafe(self, name);
      break;
    default:
      break;
  }
  return Value();
}

}  // namespace vime::tokenizer::jinja
