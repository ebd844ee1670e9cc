// Jinja2's builtin filters (filters.py) plus transformers' tojson. Filters that Jinja2 returns as
// generators (map, select, reverse, unique, ...) return lists here: the same items wherever a
// template iterates, joins or counts them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/call_args.hpp"
#include "vime/tokenizer/jinja/interpreter.hpp"
#include "vime/tokenizer/jinja/operators.hpp"
#include "vime/tokenizer/jinja/python_text.hpp"
#include "vime/tokenizer/jinja/string_ops.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

const Value& value_of(const CallArgs& args) { return args.positional.at(0); }

// Jinja2's make_attrgetter: "a.b.0" looks up item by item; integer parts as integers.
Value get_path(Interpreter& in, Value item, const Value& attribute,
               const Value& fallback = Value()) {
  if (attribute.is_int()) return in.get_item(item, attribute);
  for (const std::string& part : split(soft_str(attribute), std::string_view("."), -1)) {
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    item = in.get_item(item, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
    if (!fallback.is_undefined() && !fallback.is_none() && item.is_undefined()) item = fallback;
  }
  return item;
}

Value ignore_case(const Value& v) { return v.is_string() ? Value(to_lower(v.as_string())) : v; }

int python_compare(const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  return compare(a, b);
}

Value f_abs(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
  throw type_error("bad operand type for abs(): '" + v.type_name() + "'");
}

// Python getattr only: a dict's keys are not attributes (its methods are).
Value f_attr(Interpreter&, CallArgs& args) {
  const Value& object = value_of(args);
  std::string name = arg(args, 1, "name").str();
  if (object.is_namespace()) {
    if (const Value* v = object.namespace_attributes().find(std::string_view(name))) return *v;
  }
  Value method = find_method(object, name);
  if (!is_no_method(method)) return method;
  std::string type = object.is_none() ? "None" : object.type_name() + " object";
  return Value::undefined("'" + type + "' has no attribute '" + name + "'");
}

Value f_batch(Interpreter&, CallArgs& args) {
  List items = iterate(value_of(args));
  Value size_v = arg(args, 1, "linecount");
  if (!size_v.is_int() || size_v.as_int() <= 0)
    throw TemplateError("FilterArgumentError", "batch size must be a positive integer");
  Value fill = arg(args, 2, "fill_with", Value::none());
  size_t size = static_cast<size_t>(size_v.as_int());
  List out, row;
  for (Value& item : items) {
    row.push_back(std::move(item));
    if (row.size() == size) out.push_back(Value::list(std::exchange(row, {})));
  }
  if (!row.empty()) {
    if (!fill.is_none()) row.resize(size, fill);
    out.push_back(Value::list(std::move(row)));
  }
  return Value::list(std::move(out));
}

Value f_capitalize(Interpreter&, CallArgs& args) {
  return Value(to_capitalized(soft_str(value_of(args))));
}

Value f_center(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  int64_t width = arg(args, 1, "width", Value(80)).as_int();
  int64_t length = static_cast<int64_t>(utf8::count(s));
  if (width <= length) return Value(s);
  int64_t pad = width - length;
  // CPython's str.center: the odd space goes left when the width is odd.
  int64_t left = pad / 2 + (pad & width & 1);
  return Value(std::string(left, ' ') + s + std::string(pad - left, ' '));
}

Value f_length(Interpreter&, CallArgs& args) {
  return Value(static_cast<int64_t>(value_of(args).length()));
}

Value f_default(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  bool boolean = arg(args, 2, "boolean", Value(false)).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return arg(args, 1, "default_value", Value(""));
  return v;
}

Value f_dictsort(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  if (!v.is_dict())
    throw TemplateError("AttributeError",
                        "'" + v.type_name() + "' object has no attribute 'items'");
  bool case_sensitive = arg(args, 1, "case_sensitive", Value(false)).truthy();
  std::string by = soft_str(arg(args, 2, "by", Value("key")));
  if (by != "key" && by != "value")
    throw TemplateError("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
  bool reverse = arg(args, 3, "reverse", Value(false)).truthy();
  List pairs;
  for (const auto& [k, val] : v.as_dict().items) pairs.push_back(Value::tuple({k, val}));
  size_t pos = by == "key" ? 0 : 1;
  auto key = [&](const Value& p) {
    return case_sensitive ? p.as_list()[pos] : ignore_case(p.as_list()[pos]);
  };
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    return reverse ? python_compare(key(b), key(a)) < 0 : python_compare(key(a), key(b)) < 0;
  });
  return Value::list(std::move(pairs));
}

Value f_escape(Interpreter&, CallArgs& args) {
  std::string out;
  for (char c : soft_str(value_of(args))) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return Value(std::move(out));
}

Value f_first(Interpreter&, CallArgs& args) {
  List items = iterate(value_of(args));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(Interpreter&, CallArgs& args) {
  List items = iterate(value_of(args));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_float(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  Value fallback = arg(args, 1, "default", Value(0.0));
  if (v.is_number()) return Value(v.to_double());
  if (v.is_string()) {
    std::string s(utf8::strip(v.as_string(), "", true, true));
    std::erase(s, '_');
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value(d);
  }
  return fallback;
}

Value f_format(Interpreter&, CallArgs& args) {
  List rest(args.positional.begin() + 1, args.positional.end());
  if (!args.keyword.empty())
    throw TemplateError("FilterArgumentError", "format with keyword arguments is not supported");
  return Value(percent_format(soft_str(value_of(args)), rest));
}

Value f_indent(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  Value width = arg(args, 1, "width", Value(4));
  std::string indention =
      width.is_string()
          ? width.as_string()
          : std::string(static_cast<size_t>(std::max<int64_t>(0, width.as_int())), ' ');
  bool first = arg(args, 2, "first", Value(false)).truthy();
  bool blank = arg(args, 3, "blank", Value(false)).truthy();
  s += "\n";  // Jinja2's quirk so that splitlines keeps a trailing empty line
  std::vector<std::string> lines = splitlines(s);
  std::string out;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) out += (i > 0 ? "\n" + indention : "") + lines[i];
  } else {
    out = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += '\n';
      if (!lines[i].empty()) out.append(indention).append(lines[i]);
    }
  }
  if (first) out = indention + out;
  return Value(std::move(out));
}

Value f_int(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  Value fallback = arg(args, 1, "default", Value(0));
  int base = static_cast<int>(arg(args, 2, "base", Value(10)).as_int());
  if (v.is_int() || v.is_bool()) return Value(v.is_bool() ? int64_t{v.as_bool()} : v.as_int());
  if (v.is_float())
    return std::isfinite(v.as_float()) ? Value(static_cast<int64_t>(std::trunc(v.as_float())))
                                       : fallback;
  if (v.is_string()) {
    std::string s(utf8::strip(v.as_string(), "", true, true));
    std::erase(s, '_');
    char* end = nullptr;
    long long i = std::strtoll(s.c_str(), &end, base);
    if (!s.empty() && end == s.c_str() + s.size()) return Value(static_cast<int64_t>(i));
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d))
      return Value(static_cast<int64_t>(std::trunc(d)));
  }
  return fallback;
}

Value f_items(Interpreter& in, CallArgs& args) {
  const Value& v = value_of(args);
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict()) throw type_error("Can only get item pairs from a mapping.");
  CallArgs none;
  return in.call(find_method(v, "items"), none);
}

Value f_join(Interpreter& in, CallArgs& args) {
  List items = iterate(value_of(args));
  std::string separator = soft_str(arg(args, 1, "d", Value("")));
  Value attribute = arg(args, 2, "attribute", Value::none());
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += soft_str(attribute.is_none() ? items[i] : get_path(in, items[i], attribute));
  }
  return Value(std::move(out));
}

Value f_list(Interpreter&, CallArgs& args) { return Value::list(iterate(value_of(args))); }
Value f_lower(Interpreter&, CallArgs& args) { return Value(to_lower(soft_str(value_of(args)))); }
Value f_upper(Interpreter&, CallArgs& args) { return Value(to_upper(soft_str(value_of(args)))); }
// Jinja2's title is not str.title: words start after whitespace or one of "-({[<", and the rest
// of each word is lowered ("what's" -> "What's", "</think>" -> "</think>").
Value f_title(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  std::string out;
  bool word_start = true;
  for (size_t pos = 0; pos < s.size();) {
    size_t start = pos;
    char32_t cp = utf8::next(s, pos);
    bool separator =
        utf8::is_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    std::string_view piece(s.data() + start, pos - start);
    out += separator ? std::string(piece) : word_start ? to_upper(piece) : to_lower(piece);
    word_start = separator;
  }
  return Value(std::move(out));
}

Value f_map(Interpreter& in, CallArgs& args) {
  List items = iterate(value_of(args));
  List out;
  const Value* attribute = args.keyword_arg("attribute");
  if (args.positional.size() == 1 && attribute) {
    Value fallback = args.keyword_arg("default") ? *args.keyword_arg("default") : Value::none();
    for (const Value& item : items) out.push_back(get_path(in, item, *attribute, fallback));
    return Value::list(std::move(out));
  }
  if (args.positional.size() < 2)
    throw TemplateError("FilterArgumentError", "map requires a filter argument");
  std::string name = expect_string(args.positional[1], "map filter name");
  for (const Value& item : items) {
    CallArgs call;
    call.positional.push_back(item);
    call.positional.insert(call.positional.end(), args.positional.begin() + 2,
                           args.positional.end());
    call.keyword = args.keyword;
    out.push_back(in.apply_filter(name, call));
  }
  return Value::list(std::move(out));
}

Value min_or_max(Interpreter& in, CallArgs& args, bool want_max) {
  List items = iterate(value_of(args));
  bool case_sensitive = arg(args, 1, "case_sensitive", Value(false)).truthy();
  Value attribute = arg(args, 2, "attribute", Value::none());
  if (items.empty())
    return Value::undefined(std::string("No aggregated item, sequence was empty."));
  auto key = [&](const Value& v) {
    Value k = attribute.is_none() ? v : get_path(in, v, attribute);
    return case_sensitive ? k : ignore_case(k);
  };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    int c = python_compare(key(items[i]), key(items[best]));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}
Value f_max(Interpreter& in, CallArgs& args) { return min_or_max(in, args, true); }
Value f_min(Interpreter& in, CallArgs& args) { return min_or_max(in, args, false); }

Value select_or_reject(Interpreter& in, CallArgs& args, bool keep_matching, bool lookup_attr) {
  const Value& seq = value_of(args);
  List out;
  if (!seq.truthy()) return Value::list(std::move(out));
  size_t off = 1;
  Value attribute;
  if (lookup_attr) {
    if (args.positional.size() < 2)
      throw TemplateError("FilterArgumentError", "Missing parameter for attribute name");
    attribute = args.positional[1];
    off = 2;
  }
  bool has_test = args.positional.size() > off;
  std::string test = has_test ? expect_string(args.positional[off], "test name") : "";
  for (const Value& item : iterate(seq)) {
    Value subject = lookup_attr ? get_path(in, item, attribute) : item;
    bool hit;
    if (has_test) {
      CallArgs call;
      call.positional.push_back(subject);
      call.positional.insert(call.positional.end(), args.positional.begin() + off + 1,
                             args.positional.end());
      call.keyword = args.keyword;
      hit = in.apply_test(test, call);
    } else {
      hit = subject.truthy();
    }
    if (hit == keep_matching) out.push_back(item);
  }
  return Value::list(std::move(out));
}
Value f_select(Interpreter& in, CallArgs& args) { return select_or_reject(in, args, true, false); }
Value f_reject(Interpreter& in, CallArgs& args) { return select_or_reject(in, args, false, false); }
Value f_selectattr(Interpreter& in, CallArgs& args) {
  return select_or_reject(in, args, true, true);
}
Value f_rejectattr(Interpreter& in, CallArgs& args) {
  return select_or_reject(in, args, false, true);
}

Value f_replace(Interpreter&, CallArgs& args) {
  Value count = arg(args, 3, "count", Value::none());
  return Value(replace(soft_str(value_of(args)), soft_str(arg(args, 1, "old")),
                       soft_str(arg(args, 2, "new")), count.is_none() ? -1 : count.as_int()));
}

Value f_reverse(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  if (v.is_string()) return slice(v, Value::none(), Value::none(), Value(-1));
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_round(Interpreter&, CallArgs& args) {
  double v = value_of(args).to_double();
  int64_t precision = arg(args, 1, "precision", Value(0)).as_int();
  std::string method = soft_str(arg(args, 2, "method", Value("common")));
  double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "common") {
    // Python's round() rounds the exact binary value, ties to even: what printf's %.Nf does.
    if (precision < 0 || !std::isfinite(v)) return Value(std::nearbyint(v * scale) / scale);
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(precision, 300)), v);
    return Value(std::strtod(buf, nullptr));
  }
  if (method == "ceil") return Value(std::ceil(v * scale) / scale);
  if (method == "floor") return Value(std::floor(v * scale) / scale);
  throw TemplateError("FilterArgumentError", "method must be common, ceil or floor");
}

Value f_safe(Interpreter&, CallArgs& args) { return Value(soft_str(value_of(args))); }
Value f_string(Interpreter&, CallArgs& args) { return Value(soft_str(value_of(args))); }

Value f_sort(Interpreter& in, CallArgs& args) {
  List items = iterate(value_of(args));
  bool reverse = arg(args, 1, "reverse", Value(false)).truthy();
  bool case_sensitive = arg(args, 2, "case_sensitive", Value(false)).truthy();
  Value attribute = arg(args, 3, "attribute", Value::none());
  std::vector<Value> attributes;
  if (!attribute.is_none()) {
    if (attribute.is_string()) {
      for (const std::string& a : split(attribute.as_string(), std::string_view(","), -1))
        attributes.emplace_back(a);
    } else {
      attributes.push_back(attribute);
    }
  }
  auto key = [&](const Value& v) {
    if (attributes.empty()) return case_sensitive ? v : ignore_case(v);
    List parts;
    for (const Value& a : attributes) {
      Value k = get_path(in, v, a);
      parts.push_back(case_sensitive ? k : ignore_case(k));
    }
    return attributes.size() == 1 ? parts[0] : Value::list(std::move(parts));
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? python_compare(key(b), key(a)) < 0 : python_compare(key(a), key(b)) < 0;
  });
  return Value::list(std::move(items));
}

Value f_sum(Interpreter& in, CallArgs& args) {
  Value attribute = arg(args, 1, "attribute", Value::none());
  Value total = arg(args, 2, "start", Value(0));
  for (const Value& item : iterate(value_of(args))) {
    total =
        binary_operation("+", total, attribute.is_none() ? item : get_path(in, item, attribute));
  }
  return total;
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None,
// sort_keys=False).
Value f_tojson(Interpreter&, CallArgs& args) {
  JsonDumpOptions options;
  options.ensure_ascii = arg(args, 1, "ensure_ascii", Value(false)).truthy();
  Value indent = arg(args, 2, "indent", Value::none());
  if (indent.is_int())
    options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  else if (indent.is_string())
    options.indent = indent.as_string();
  else if (!indent.is_none())
    throw type_error("indent must be an int or a str, not " + indent.type_name());
  Value separators = arg(args, 3, "separators", Value::none());
  if (separators.is_sequence()) {
    if (separators.as_list().size() != 2)
      throw TemplateError("ValueError", "separators must be a pair (item, key)");
    options.item_separator = expect_string(separators.as_list()[0], "separator");
    options.key_separator = expect_string(separators.as_list()[1], "separator");
  } else if (!separators.is_none()) {
    throw type_error("separators must be a tuple, not " + separators.type_name());
  }
  options.sort_keys = arg(args, 4, "sort_keys", Value(false)).truthy();
  return Value(json_dumps(value_of(args), options));
}

Value f_trim(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  Value chars = arg(args, 1, "chars", Value::none());
  if (chars.is_none()) return Value(utf8::strip(s, "", true, true));
  return Value(utf8::strip(s, expect_string(chars, "trim chars"), true, true, false));
}

Value f_truncate(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  int64_t length = arg(args, 1, "length", Value(255)).as_int();
  bool killwords = arg(args, 2, "killwords", Value(false)).truthy();
  std::string end = soft_str(arg(args, 3, "end", Value("...")));
  int64_t leeway = arg(args, 4, "leeway", Value(5)).as_int();
  std::vector<size_t> at = utf8::offsets(s);
  int64_t n = static_cast<int64_t>(at.size()) - 1;
  if (n <= length + leeway) return Value(s);
  int64_t keep = std::max<int64_t>(0, length - static_cast<int64_t>(utf8::count(end)));
  std::string head = s.substr(0, at[keep]);
  if (killwords) return Value(head + end);
  size_t space = head.rfind(' ');
  return Value((space == std::string::npos ? std::string() : head.substr(0, space)) + end);
}

Value f_unique(Interpreter& in, CallArgs& args) {
  bool case_sensitive = arg(args, 1, "case_sensitive", Value(false)).truthy();
  Value attribute = arg(args, 2, "attribute", Value::none());
  List out, seen;
  for (const Value& item : iterate(value_of(args))) {
    Value key = attribute.is_none() ? item : get_path(in, item, attribute);
    if (!case_sensitive) key = ignore_case(key);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value f_wordcount(Interpreter&, CallArgs& args) {
  std::string s = soft_str(value_of(args));
  int64_t words = 0;
  bool in_word = false;
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = utf8::next(s, pos);
    bool word_char = utf8::is_word_char(cp);
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

const std::map<std::string_view, Builtin, std::less<>> kFilters = {
    {"abs", f_abs},           {"attr", f_attr},
    {"batch", f_batch},       {"capitalize", f_capitalize},
    {"center", f_center},     {"count", f_length},
    {"d", f_default},         {"default", f_default},
    {"dictsort", f_dictsort}, {"e", f_escape},
    {"escape", f_escape},     {"forceescape", f_escape},
    {"first", f_first},       {"float", f_float},
    {"format", f_format},     {"indent", f_indent},
    {"int", f_int},           {"items", f_items},
    {"join", f_join},         {"last", f_last},
    {"length", f_length},     {"list", f_list},
    {"lower", f_lower},       {"map", f_map},
    {"max", f_max},           {"min", f_min},
    {"reject", f_reject},     {"rejectattr", f_rejectattr},
    {"replace", f_replace},   {"reverse", f_reverse},
    {"round", f_round},       {"safe", f_safe},
    {"select", f_select},     {"selectattr", f_selectattr},
    {"sort", f_sort},         {"string", f_string},
    {"sum", f_sum},           {"title", f_title},
    {"tojson", f_tojson},     {"trim", f_trim},
    {"truncate", f_truncate}, {"unique", f_unique},
    {"upper", f_upper},       {"wordcount", f_wordcount},
};

}  // namespace

Builtin find_filter(std::string_view name) {
  auto it = kFilters.find(name);
  return it == kFilters.end() ? find_rare_filter(name) : it->second;
}

}  // namespace vime::tokenizer::jinja
