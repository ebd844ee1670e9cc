// A compiled PCRE2 pattern (UTF + Unicode properties, JIT) for the pre-tokenizer splits HF writes
// as Oniguruma regexes. Thread-safe: matching state is per thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace vime::tokenizer {

class Regex {
 public:
  // Throws vime::Error naming the pattern when it does not compile.
  explicit Regex(const std::string& pattern);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Calls on_match(start, end) for each non-overlapping match, left to right. `text` must be valid
  // UTF-8. An empty match advances by one character, as Oniguruma's find_iter does.
  template <class F>
  void for_each_match(std::string_view text, F&& on_match) const {
    size_t start = 0;
    size_t end = 0;
    size_t from = 0;
    while (from <= text.size() && next_match(text, from, start, end)) {
      on_match(start, end);
      if (end == start) {
        if (end >= text.size()) break;
        from = end + 1;
        while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80)
          ++from;
      } else {
        from = end;
      }
    }
  }

  const std::string& pattern() const { return pattern_; }
  static std::string escape(std::string_view literal);

 private:
  bool next_match(std::string_view text, size_t from, size_t& start, size_t& end) const;
  struct Code;
  std::string pattern_;
  std::unique_ptr<Code> code_;
};

}  // namespace vime::tokenizer
