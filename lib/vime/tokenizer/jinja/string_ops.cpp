#include "vime/tokenizer/jinja/string_ops.hpp"

#include <algorithm>

#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

}  // namespace

std::string to_upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), upper);
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

std::string to_title(std::string_view s) {
  std::string out(s);
  bool previous_cased = false;
  for (char& c : out) {
    bool cased = is_alpha(c) || static_cast<unsigned char>(c) >= 0x80;
    if (is_alpha(c)) c = previous_cased ? lower(c) : upper(c);
    previous_cased = cased;
  }
  return out;
}

std::string to_capitalized(std::string_view s) {
  std::string out = to_lower(s);
  if (!out.empty()) out[0] = upper(out[0]);
  return out;
}

std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep, int64_t maxsplit, bool from_right) {
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
    for (int64_t i = 0; i < maxsplit; ++i) parts.emplace_back(s.substr(words[i].first, words[i].second - words[i].first));
    parts.emplace_back(s.substr(words[maxsplit].first));
    return parts;
  }
  size_t n = words.size();
  parts.emplace_back(s.substr(0, words[n - maxsplit - 1].second));
  for (size_t i = n - maxsplit; i < n; ++i) parts.emplace_back(s.substr(words[i].first, words[i].second - words[i].first));
  return parts;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> lines;
  size_t start = 0, pos = 0;
  while (pos < s.size()) {
    size_t at = pos;
    char32_t cp = utf8::next(s, pos);
    bool is_break = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C || cp == 0x1D ||
                    cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!is_break) continue;
    if (cp == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    lines.emplace_back(s.substr(start, (keepends ? pos : at) - start));
    start = pos;
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return lines;
}

std::string replace(std::string_view s, std::string_view old, std::string_view replacement, int64_t count) {
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
  for (size_t at = s.find(sub); at != std::string_view::npos; at = s.find(sub, at + sub.size())) ++n;
  return n;
}

}  // namespace vime::tokenizer::jinja
