// --prompt-data / --eval-prompt-data paths with slime's row-slice suffix: "data.jsonl@[a:b]"
// selects rows like Python's rows[a:b], negative bounds included
// (slime/utils/data.py::_parse_generalized_path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vime::data {

struct RowSlice {
  std::optional<int64_t> start;  // None = from the first row
  std::optional<int64_t> stop;   // None = to the end
};

struct PromptPath {
  std::string path;               // the file, without the suffix
  std::optional<RowSlice> slice;  // set when the text ended in @[a:b]
};

// Splits "path@[a:b]" (regex ^(.*)@\[(-?\d*):(-?\d*)\]$); any other text is a plain path.
PromptPath parse_prompt_path(std::string_view text);

// The half-open row range [first, last) that Python's rows[start:stop] selects from `num_rows`
// rows.
struct RowRange {
  size_t first = 0;
  size_t last = 0;
};
RowRange resolve_row_slice(const RowSlice& slice, size_t num_rows);

}  // namespace vime::data
