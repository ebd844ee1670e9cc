#include "vime/data/prompt_path.hpp"

#include <algorithm>
#include <charconv>

namespace vime::data {
namespace {

// "-12", "7" or "" (None). Returns false for anything else, so the text is taken as a plain path.
bool parse_bound(std::string_view text, std::optional<int64_t>& out) {
  if (text.empty()) {
    out.reset();
    return true;
  }
  std::string_view digits = text.front() == '-' ? text.substr(1) : text;
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

// Python's slice.indices() clamp for a step of 1.
size_t clamp_bound(std::optional<int64_t> bound, size_t num_rows, size_t if_none) {
  if (!bound) return if_none;
  const auto n = static_cast<int64_t>(num_rows);
  int64_t v = *bound;
  if (v < 0) v = std::max<int64_t>(v + n, 0);
  return static_cast<size_t>(std::min(v, n));
}

}  // namespace

PromptPath parse_prompt_path(std::string_view text) {
  PromptPath plain{std::string(text), std::nullopt};
  if (text.size() < 5 || text.back() != ']') return plain;
  const size_t at = text.rfind("@[");
  if (at == std::string_view::npos) return plain;
  std::string_view inside = text.substr(at + 2, text.size() - at - 3);
  const size_t colon = inside.find(':');
  if (colon == std::string_view::npos) return plain;
  RowSlice slice;
  if (!parse_bound(inside.substr(0, colon), slice.start) ||
      !parse_bound(inside.substr(colon + 1), slice.stop))
    return plain;
  return {std::string(text.substr(0, at)), slice};
}

RowRange resolve_row_slice(const RowSlice& slice, size_t num_rows) {
  const size_t first = clamp_bound(slice.start, num_rows, 0);
  const size_t last = clamp_bound(slice.stop, num_rows, num_rows);
  return {first, std::max(first, last)};
}

}  // namespace vime::data
