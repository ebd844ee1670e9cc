#include "vime/tokenizer/onig_compat.hpp"

#include <utf8proc.h>

#include <cstdio>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "vime/error.hpp"
#include "vime/tokenizer/unicode.hpp"

namespace vime::tokenizer {
namespace {

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

// Code points utf8proc assigns but PCRE2 reads as unassigned (Cn), by utf8proc's general category
// ("Lo", "So", ...). Empty when both know the same Unicode version.
const std::map<std::string, Ranges>& newer_characters() {
  static const std::map<std::string, Ranges> by_category = [] {
    std::map<std::string, Ranges> result;
    // A code point PCRE2 reads as unassigned.
    const Regex unassigned("\\A\\p{Cn}\\z", {.assume_valid_utf8 = true});
    std::string utf8;
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
      if (category == UTF8PROC_CATEGORY_CN || category == UTF8PROC_CATEGORY_CO) continue;
      utf8.clear();
      append_utf8(utf8, cp);
      if (!unassigned.matches_anywhere(utf8)) continue;  // PCRE2 knows it
      Ranges& ranges = result[utf8proc_category_string(static_cast<utf8proc_int32_t>(cp))];
      if (!ranges.empty() && ranges.back().second + 1 == cp) {
        ranges.back().second = cp;
      } else {
        ranges.emplace_back(cp, cp);
      }
    }
    return result;
  }();
  return by_category;
}

bool is_general_category(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "L",  "Lu", "Ll", "Lt",  "Lm",  "Lo",  "L&",  "LC",  "M",  "Mn", "Mc", "Me",
      "N",  "Nd", "Nl", "No",  "P",   "Pc",  "Pd",  "Ps",  "Pe", "Pi", "Pf", "Po",
      "S",  "Sm", "Sc", "Sk",  "So",  "Z",   "Zs",  "Zl",  "Zp", "C",  "Cc", "Cf",
      "Cs", "Co", "Cn", "Any", "Xan", "Xps", "Xsp", "Xwd", "Xuc"};
  for (std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

// The newer characters of general category `name` ("L", "Lu", "L&", ...) as class ranges, or "".
std::string newer_ranges(const std::string& name) {
  if (name.empty() || name[0] == 'C' || name == "Any" || name[0] == 'X') return {};
  std::string out;
  for (const auto& [category, ranges] : newer_characters()) {
    const bool matches = name.size() == 1 ? category[0] == name[0]
                         : (name == "L&" || name == "LC")
                             ? (category == "Lu" || category == "Ll" || category == "Lt")
                             : category == name;
    if (!matches) continue;
    for (const auto& [first, last] : ranges) {
      char buffer[32];
      if (first == last) {
        std::snprintf(buffer, sizeof(buffer), "\\x{%X}", static_cast<unsigned>(first));
      } else {
        std::snprintf(buffer, sizeof(buffer), "\\x{%X}-\\x{%X}", static_cast<unsigned>(first),
                      static_cast<unsigned>(last));
      }
      out += buffer;
    }
  }
  return out;
}

}  // namespace

Regex oniguruma_regex(const std::string& pattern) {
  const std::string rewritten = pcre2_pattern_for_oniguruma(pattern);
  if (rewritten != pattern) {
    try {
      return Regex(rewritten, {.assume_valid_utf8 = true});
    } catch (const Error&) {  // PCRE2 cannot take the rewrite: the pattern as written
    }
  }
  try {
    return Regex(pattern, {.assume_valid_utf8 = true});
  } catch (const Error& e) {
    throw Error("tokenizer: the pre-tokenizer " + std::string(e.what()));
  }
}

std::string pcre2_pattern_for_oniguruma(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char kind = pattern[i + 1];
      const size_t close = pattern.find('}', i + 2);
      if ((kind != 'p' && kind != 'P') || i + 2 >= pattern.size() || pattern[i + 2] != '{' ||
          close == std::string::npos) {
        out.append(pattern, i, 2);
        ++i;
        continue;
      }
      const std::string original = pattern.substr(i, close + 1 - i);
      std::string name = pattern.substr(i + 3, close - i - 3);
      bool negated = kind == 'P';
      if (!name.empty() && name[0] == '^') {
        negated = !negated;
        name.erase(0, 1);
      }
      i = close;
      if (name.empty() || name.find(':') != std::string::npos ||
          name.find('=') != std::string::npos) {
        out += original;
      } else if (!is_general_category(name)) {  // a script
        out += std::string(negated ? "\\P" : "\\p") + "{sc:" + name + "}";
      } else if (const std::string extra = newer_ranges(name);
                 extra.empty() || (in_class && negated)) {
        out += original;
      } else if (in_class) {
        out += original + extra;
      } else {
        out += std::string(negated ? "[^" : "[") + "\\p{" + name + "}" + extra + "]";
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out.push_back(pattern[++i]);  // a literal ]
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {  // [:alpha:]
      const size_t end = pattern.find(":]", i + 2);
      if (end != std::string::npos) {
        out.append(pattern, i, end + 2 - i);
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace vime::tokenizer
