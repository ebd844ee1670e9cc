#include "vime/tokenizer/jinja/string_ops.hpp"

#include <algorithm>

#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

// Simple case mappings of the scripts chat data uses most (Latin, Greek, Cyrillic, fullwidth
// Latin); other code points have no case here.
char32_t upper_of(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c & ~char32_t{1};
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c : c - 1;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
  return c;
}

char32_t lower_of(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x178) return 0xFF;
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c | 1;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

bool is_cased(char32_t c) { return upper_of(c) != c || lower_of(c) != c || c == 0xDF; }

void append_upper(std::string& out, char32_t c) {
  if (c == 0xDF) {
    out += "SS";  // Python: "ß".upper() == "SS"
    return;
  }
  utf8::append(out, upper_of(c));
}

}  // namespace

std::string to_upper(std::string_view s) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) append_upper(out, utf8::next(s, pos));
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) utf8::append(out, lower_of(utf8::next(s, pos)));
  return out;
}

std::string to_title(std::string_view s) {
  std::string out;
  bool previous_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    char32_t c = utf8::next(s, pos);
    if (previous_cased) {
      utf8::append(out, lower_of(c));
    } else {
      append_upper(out, c);
    }
    previous_cased = is_cased(c);
  }
  return out;
}

std::string to_capitalized(std::string_view s) {
  std::string out;
  bool first = true;
  for (size_t pos = 0; pos < s.size(); first = false) {
    char32_t c = utf8::next(s, pos);
    if (first) {
      append_upper(out, c);
    } else {
      utf8::append(out, lower_of(c));
    }
  }
  return out;
}

bool has_cased(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    if (is_cased(utf8::next(s, pos))) return true;
  }
  return false;
}

std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep,
                               int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  if (sep) {
    if (sep->empty()) return {std::string(s)};
    if (!from_right) {
      size_t start = 0;
      while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
        size_t at = s.find(*sep, start);
        if (at == std::string_view::npos) break;
        parts.emplace_back(s.substr(start, at - start));
        start = at + sep->size();
      }
      parts.emplace_back(s.substr(start));
      return parts;
    }
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t at = s.rfind(*sep, end - sep->size());
      if (at == std::string_view::npos) break;
      parts.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    parts.emplace_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  // Whitespace splitting, by code point.
  std::vector<std::pair<size_t, size_t>> words;  // byte ranges
  size_t pos = 0, word_start = std::string_view::npos;
  while (pos < s.size()) {
    size_t at = pos;
    bool space = utf8::is_space(utf8::next(s, pos));
    if (space && word_start != std::string_view::npos) {
      words.emplace_back(word_start, at);
      word_start = std::string_view::npos;
    } else if (!space && word_start == std::string_view::npos) {
      word_start = at;
    }
  }
  if (word_start != std::string_view::npos) words.emplace_back(word_start, s.size());
  if (maxsplit < 0 || static_cast<int64_t>(words.size()) <= maxsplit) {
    for (auto [b, e] : words) parts.emplace_back(s.substr(b, e - b));
    return parts;
  }
  if (!from_right) {
    for (int64_t i = 0; i < maxsplit; ++i)
      parts.emplace_back(s.substr(words[i].first, words[i].second - words[i].first));
    parts.emplace_back(s.substr(words[maxsplit].first));
    return parts;
  }
  size_t n = words.size();
  parts.emplace_back(s.substr(0, words[n - maxsplit - 1].second));
  for (size_t i = n - maxsplit; i < n; ++i)
    parts.emplace_back(s.substr(words[i].first, words[i].second - words[i].first));
  return parts;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> lines;
  size_t start = 0, pos = 0;
  while (pos < s.size()) {
    size_t at = pos;
    char32_t cp = utf8::next(s, pos);
    bool is_break = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C ||
                    cp == 0x1D || cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!is_break) continue;
    if (cp == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    lines.emplace_back(s.substr(start, (keepends ? pos : at) - start));
    start = pos;
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return lines;
}

std::string replace(std::string_view s, std::string_view old, std::string_view replacement,
                    int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every code point and at the end.
    std::vector<size_t> at = utf8::offsets(s);
    int64_t done = 0;
    for (size_t i = 0; i < at.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      if (i + 1 < at.size()) out.append(s.substr(at[i], at[i + 1] - at[i]));
    }
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t at = s.find(old, start);
    if (at == std::string_view::npos) break;
    out.append(s.substr(start, at - start));
    out.append(replacement);
    start = at + old.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

int64_t find_substring(std::string_view s, std::string_view sub, bool from_right) {
  size_t at = from_right ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos) return -1;
  return static_cast<int64_t>(utf8::count(s.substr(0, at)));
}

int64_t count_substring(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(utf8::count(s)) + 1;
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string_view::npos; at = s.find(sub, at + sub.size()))
    ++n;
  return n;
}

}  // namespace vime::tokenizer::jinja
