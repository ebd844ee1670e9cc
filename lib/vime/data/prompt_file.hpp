// Reads the rows of a prompt file (slime/utils/data.py::read_file): JSONL, one object per line,
// with the optional @[a:b] row slice. Malformed lines are skipped and reported with their line
// numbers. Parquet is refused with a conversion command: Debian 12 has no Arrow to read it with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vime/json.hpp"

namespace vime::data {

struct BadLine {
  int64_t line_number = 0;  // 1-based
  std::string reason;
};

struct PromptRow {
  int64_t line_number = 0;  // 1-based line in the file, for messages
  Json value;               // a JSON object
};

struct PromptFile {
  std::string path;  // without the slice suffix
  std::vector<PromptRow> rows;
  std::vector<BadLine> bad_lines;  // lines that were not a JSON object (inside the slice or not)
};

// `spec` is "file.jsonl" or "file.jsonl@[a:b]"; `flag` names the flag in errors. Blank lines are
// skipped silently. Throws UsageError when the file cannot be read, is Parquet, has another
// suffix, or has malformed lines and no good row at all.
PromptFile read_prompt_file(std::string_view spec, std::string_view flag = "--prompt-data");

// "data.jsonl: skipped 2 malformed lines (line 3: ..., line 9: ...)", listing at most 5 lines.
std::string describe_bad_lines(const PromptFile& file);

}  // namespace vime::data
