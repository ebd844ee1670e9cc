#include "vime/tokenizer/jinja/python_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vime/python_format.hpp"
#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"
#include "vime/tokenizer/jinja/value.hpp"

namespace vime::tokenizer::jinja {
namespace {

void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  out += buf;
}

// str.isprintable() for the code points chat data holds; the rest of Unicode's Other/Separator
// categories are rare enough in templates to print as themselves.
bool is_printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp <= 0xA0) return false;
  if (cp == 0xAD || cp == 0x1680 || cp == 0x3000 || cp == 0xFEFF) return false;
  if ((cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
      (cp >= 0x205F && cp <= 0x206F))
    return false;
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;  // private use
  return true;
}

void dump(const Value& v, const JsonDumpOptions& o, int depth, std::string& out);

void newline_indent(const JsonDumpOptions& o, int depth, std::string& out) {
  out += '\n';
  for (int i = 0; i < depth; ++i) out += *o.indent;
}

void dump_string(std::string_view s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = utf8::next(s, pos);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp < 0x20 || (cp == 0x7F && ensure_ascii)) {  // ensure_ascii escapes all but ' '..'~'
      append_hex(out, "\\u", cp, 4);
    } else if (cp < 0x80 || !ensure_ascii) {
      utf8::append(out, cp);
    } else if (cp >= 0x10000) {
      char32_t v = cp - 0x10000;
      append_hex(out, "\\u", 0xD800 | (v >> 10), 4);
      append_hex(out, "\\u", 0xDC00 | (v & 0x3FF), 4);
    } else {
      append_hex(out, "\\u", cp, 4);
    }
  }
  out += '"';
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return python_float_repr(d);
}

void dump_sequence(const List& items, const JsonDumpOptions& o, int depth, std::string& out) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  const std::string& sep = *o.item_separator;
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    if (o.indent) newline_indent(o, depth + 1, out);
    dump(items[i], o, depth + 1, out);
  }
  if (o.indent) newline_indent(o, depth, out);
  out += ']';
}

std::string json_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString:
      return key.as_string();
    case Value::Kind::kNone:
      return "null";
    case Value::Kind::kBool:
      return key.as_bool() ? "true" : "false";
    case Value::Kind::kInt:
      return std::to_string(key.as_int());
    case Value::Kind::kFloat:
      return json_float(key.as_float());
    default:
      throw type_error("keys must be str, int, float, bool or None, not " + key.type_name());
  }
}

void dump_dict(const Dict& d, const JsonDumpOptions& o, int depth, std::string& out) {
  if (d.items.empty()) {
    out += "{}";
    return;
  }
  std::vector<std::pair<std::string, const Value*>> entries;
  for (const auto& [k, v] : d.items) entries.emplace_back(json_key(k), &v);
  if (o.sort_keys) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  out += '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += *o.item_separator;
    if (o.indent) newline_indent(o, depth + 1, out);
    dump_string(entries[i].first, o.ensure_ascii, out);
    out += *o.key_separator;
    dump(*entries[i].second, o, depth + 1, out);
  }
  if (o.indent) newline_indent(o, depth, out);
  out += '}';
}

void dump(const Value& v, const JsonDumpOptions& o, int depth, std::string& out) {
  if (depth > 500)
    throw TemplateError("RecursionError", "maximum recursion depth exceeded in tojson");
  switch (v.kind()) {
    case Value::Kind::kNone:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::kFloat:
      out += json_float(v.as_float());
      return;
    case Value::Kind::kString:
      dump_string(v.as_string(), o.ensure_ascii, out);
      return;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      dump_sequence(v.as_list(), o, depth, out);
      return;
    case Value::Kind::kDict:
      dump_dict(v.as_dict(), o, depth, out);
      return;
    default:
      throw type_error("Object of type " + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string string_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = utf8::next(s, pos);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (is_printable(cp)) {
      utf8::append(out, cp);
    } else if (cp < 0x100) {
      append_hex(out, "\\x", cp, 2);
    } else if (cp < 0x10000) {
      append_hex(out, "\\u", cp, 4);
    } else {
      append_hex(out, "\\U", cp, 8);
    }
  }
  out += quote;
  return out;
}

std::string json_dumps(const Value& v, const JsonDumpOptions& options) {
  JsonDumpOptions o = options;
  if (!o.item_separator) o.item_separator = o.indent ? "," : ", ";
  if (!o.key_separator) o.key_separator = ": ";
  std::string out;
  dump(v, o, 0, out);
  return out;
}

}  // namespace vime::tokenizer::jinja
