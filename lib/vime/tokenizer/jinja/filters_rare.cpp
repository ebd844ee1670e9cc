// Jinja2 filters chat templates seldom use: groupby, slice, striptags, pprint, filesizeformat,
// urlencode, xmlattr. (random, urlize and wordwrap are not provided: a template naming them fails
// to parse with "No filter named ...".)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "vime/tokenizer/jinja/builtins.hpp"
#include "vime/tokenizer/jinja/call_args.hpp"
#include "vime/tokenizer/jinja/interpreter.hpp"
#include "vime/tokenizer/jinja/string_ops.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

const Value& value_of(const CallArgs& args) { return args.positional.at(0); }

Value lookup_path(Interpreter& in, Value item, const Value& attribute, const Value& fallback) {
  if (attribute.is_int()) return in.get_item(item, attribute);
  for (const std::string& part : split(attribute.str(), std::string_view("."), -1)) {
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    item = in.get_item(item, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
    if (!fallback.is_none() && item.is_undefined()) item = fallback;
  }
  return item;
}

// groupby: sorted by the attribute, then (grouper, list) pairs; `group.grouper` and `group.list`
// read the pair's items (see Interpreter::get_attribute).
Value f_groupby(Interpreter& in, CallArgs& args) {
  List items = iterate(value_of(args));
  Value attribute = arg(args, 1, "attribute");
  Value fallback = arg(args, 2, "default", Value::none());
  bool case_sensitive = arg(args, 3, "case_sensitive", Value(false)).truthy();
  auto key = [&](const Value& v) {
    Value k = lookup_path(in, v, attribute, fallback);
    return case_sensitive || !k.is_string() ? k : Value(to_lower(k.as_string()));
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Value& a, const Value& b) { return compare(key(a), key(b)) < 0; });
  List groups;
  for (size_t i = 0; i < items.size();) {
    Value k = key(items[i]);
    List members;
    size_t j = i;
    while (j < items.size() && key(items[j]) == k) members.push_back(items[j++]);
    groups.push_back(Value::tuple(
        {lookup_path(in, members.front(), attribute, fallback), Value::list(std::move(members))}));
    i = j;
  }
  return Value::list(std::move(groups));
}

Value f_slice(Interpreter&, CallArgs& args) {
  List seq = iterate(value_of(args));
  Value count_v = arg(args, 1, "slices");
  if (!count_v.is_int() || count_v.as_int() <= 0)
    throw TemplateError("FilterArgumentError", "slices must be a positive integer");
  Value fill = arg(args, 2, "fill_with", Value::none());
  int64_t slices = count_v.as_int(), length = static_cast<int64_t>(seq.size());
  int64_t per_slice = length / slices, with_extra = length % slices, offset = 0;
  List out;
  for (int64_t n = 0; n < slices; ++n) {
    int64_t start = offset + n * per_slice;
    if (n < with_extra) ++offset;
    int64_t end = offset + (n + 1) * per_slice;
    List part(seq.begin() + start, seq.begin() + end);
    if (!fill.is_none() && n >= with_extra) part.push_back(fill);
    out.push_back(Value::list(std::move(part)));
  }
  return Value::list(std::move(out));
}

std::string unescape_entities(const std::string& s) {
  static const std::pair<std::string_view, std::string_view> kNamed[] = {
      {"&amp;", "&"}, {"&lt;", "<"},   {"&gt;", ">"},         {"&quot;", "\""},
      {"&#39;", "'"}, {"&apos;", "'"}, {"&nbsp;", "\xC2\xA0"}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&') {
      for (const auto& [entity, text] : kNamed) {
        if (s.compare(i, entity.size(), entity) == 0) {
          out += text;
          i += entity.size();
          replaced = true;
          break;
        }
      }
      if (!replaced && i + 2 < s.size() && s[i + 1] == '#') {
        size_t end = s.find(';', i);
        if (end != std::string::npos) {
          bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
          std::string digits = s.substr(i + (hex ? 3 : 2), end - i - (hex ? 3 : 2));
          char* stop = nullptr;
          long cp = std::strtol(digits.c_str(), &stop, hex ? 16 : 10);
          if (!digits.empty() && *stop == '\0' && cp > 0 && cp <= 0x10FFFF) {
            utf8::append(out, static_cast<char32_t>(cp));
            i = end + 1;
            replaced = true;
          }
        }
      }
    }
    if (!replaced) out += s[i++];
  }
  return out;
}

// Markup.striptags: drop comments and tags, collapse whitespace, unescape entities.
Value f_striptags(Interpreter&, CallArgs& args) {
  std::string s = value_of(args).str(), no_tags;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 4, "<!--") == 0) {
      size_t end = s.find("-->", i + 4);
      if (end != std::string::npos) {
        i = end + 3;
        continue;
      }
    }
    if (s[i] == '<') {
      size_t end = s.find('>', i + 1);
      if (end != std::string::npos) {
        i = end + 1;
        continue;
      }
    }
    no_tags += s[i++];
  }
  std::string joined;
  for (const std::string& word : split(no_tags, std::nullopt, -1))
    joined += (joined.empty() ? "" : " ") + word;
  return Value(unescape_entities(joined));
}

// pprint.pformat: repr with dict keys sorted (values short enough not to wrap at 80 columns).
Value sorted_dicts(const Value& v) {
  if (v.is_sequence()) {
    List items;
    for (const Value& x : v.as_list()) items.push_back(sorted_dicts(x));
    return v.kind() == Value::Kind::kTuple ? Value::tuple(std::move(items))
                                           : Value::list(std::move(items));
  }
  if (!v.is_dict()) return v;
  Dict d;
  for (const auto& [k, x] : v.as_dict().items) d.items.emplace_back(k, sorted_dicts(x));
  std::stable_sort(d.items.begin(), d.items.end(),
                   [](const auto& a, const auto& b) { return compare(a.first, b.first) < 0; });
  return Value::dict(std::move(d));
}
Value f_pprint(Interpreter&, CallArgs& args) { return Value(sorted_dicts(value_of(args)).repr()); }

Value f_filesizeformat(Interpreter&, CallArgs& args) {
  double bytes = value_of(args).is_string() ? std::stod(value_of(args).as_string())
                                            : value_of(args).to_double();
  bool binary = arg(args, 1, "binary", Value(false)).truthy();
  double base = binary ? 1024 : 1000;
  static const char* kDecimal[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static const char* kBinary[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  if (bytes == 1) return Value("1 Byte");
  if (bytes < base) return Value(std::to_string(static_cast<int64_t>(bytes)) + " Bytes");
  char buf[64];
  for (int i = 0; i < 8; ++i) {
    double unit = std::pow(base, i + 2);
    if (bytes < unit || i == 7) {
      std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit,
                    binary ? kBinary[i] : kDecimal[i]);
      break;
    }
  }
  return Value(std::string(buf));
}

std::string url_quote(const Value& v, bool for_query) {
  std::string s = v.str(), out;
  for (unsigned char c : s) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-' || c == '~' || (c == '/' && !for_query);
    if (keep) {
      out += static_cast<char>(c);
    } else if (c == ' ' && for_query) {
      out += '+';
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

Value f_urlencode(Interpreter&, CallArgs& args) {
  const Value& v = value_of(args);
  if (v.is_string() || !(v.is_sequence() || v.is_dict())) return Value(url_quote(v, false));
  List pairs;
  if (v.is_dict()) {
    for (const auto& [k, x] : v.as_dict().items) pairs.push_back(Value::tuple({k, x}));
  } else {
    pairs = v.as_list();
  }
  std::string out;
  for (const Value& pair : pairs) {
    List kv = iterate(pair);
    if (kv.size() != 2) throw TemplateError("ValueError", "urlencode needs (key, value) pairs");
    if (!out.empty()) out += '&';
    out.append(url_quote(kv[0], true)).append("=").append(url_quote(kv[1], true));
  }
  return Value(std::move(out));
}

Value f_xmlattr(Interpreter& in, CallArgs& args) {
  const Value& v = value_of(args);
  if (!v.is_dict())
    throw TemplateError("AttributeError",
                        "'" + v.type_name() + "' object has no attribute 'items'");
  bool autospace = arg(args, 1, "autospace", Value(true)).truthy();
  std::string out;
  for (const auto& [k, x] : v.as_dict().items) {
    if (x.is_none() || x.is_undefined()) continue;
    std::string key = k.str();
    for (char c : key) {
      if (utf8::is_space(static_cast<unsigned char>(c)) || c == '/' || c == '>' || c == '=') {
        throw TemplateError("ValueError", "Invalid character in attribute name: " + k.repr());
      }
    }
    CallArgs escape_key, escape_value;
    escape_key.positional.push_back(Value(key));
    escape_value.positional.push_back(x);
    if (!out.empty()) out += ' ';
    out.append(in.apply_filter("e", escape_key).str()).append("=\"");
    out.append(in.apply_filter("e", escape_value).str()).append("\"");
  }
  if (autospace && !out.empty()) out = " " + out;
  return Value(std::move(out));
}

const std::map<std::string_view, Builtin, std::less<>> kRareFilters = {
    {"groupby", f_groupby},
    {"slice", f_slice},
    {"striptags", f_striptags},
    {"pprint", f_pprint},
    {"filesizeformat", f_filesizeformat},
    {"urlencode", f_urlencode},
    {"xmlattr", f_xmlattr},
};

}  // namespace

Builtin find_rare_filter(std::string_view name) {
  auto it = kRareFilters.find(name);
  return it == kRareFilters.end() ? nullptr : it->second;
}

}  // namespace vime::tokenizer::jinja
