// A compiled PCRE2 pattern with Python `re` semantics for the patterns the graders use (search,
// findall, sub with \1 group references). Compiled once, JIT'd, safe to share across threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vime::rm {

class Regex {
 public:
  explicit Regex(std::string_view pattern, bool ignore_case = false);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Groups of the first match (index 0 = whole match; unmatched groups are nullopt), or nullopt.
  std::optional<std::vector<std::optional<std::string>>> search(std::string_view text) const;
  bool matches_anywhere(std::string_view text) const { return search(text).has_value(); }
  // re.findall for a pattern with one group (or none): group 1 (or the whole match) of each match.
  std::vector<std::string> findall(std::string_view text) const;
  // re.sub(pattern, replacement, text); the replacement may hold \1..\9.
  std::string sub(std::string_view replacement, std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::rm
