#include "vime/data/prompt_file.hpp"

#include <fstream>

#include "vime/data/prompt_path.hpp"
#include "vime/error.hpp"

namespace vime::data {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string parquet_hint(const std::string& path, std::string_view flag) {
  const std::string jsonl = path.substr(0, path.size() - 8) + ".jsonl";
  return std::string(flag) + " " + path +
         ": vime cannot read Parquet (Debian 12 ships no Apache Arrow). Convert it to JSONL once, "
         "e.g. python3 -c \"import pandas as pd; pd.read_parquet('" +
         path + "').to_json('" + jsonl +
         "', orient='records', lines=True, force_ascii=False)\" "
         "(or: duckdb -c \"COPY (SELECT * FROM '" +
         path + "') TO '" + jsonl + "' (FORMAT json)\"), then pass " + jsonl + ".";
}

}  // namespace

PromptFile read_prompt_file(std::string_view spec, std::string_view flag) {
  PromptPath parsed = parse_prompt_path(spec);
  PromptFile file;
  file.path = parsed.path;
  if (ends_with(file.path, ".parquet")) throw UsageError(parquet_hint(file.path, flag));
  if (!ends_with(file.path, ".jsonl") && !ends_with(file.path, ".json"))
    throw UsageError(std::string(flag) + " " + file.path +
                     ": unsupported file format; vime reads .jsonl (one JSON object per line)");
  std::ifstream in(file.path, std::ios::binary);
  if (!in)
    throw UsageError(std::string(flag) + " " + file.path +
                     ": cannot open the file (does it exist and is it readable?)");

  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line_number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // UTF-8 BOM
    if (is_blank(line)) continue;
    try {
      Json value = Json::parse(line, "JSON");
      if (!value.is_object()) {
        file.bad_lines.push_back(
            {line_number, std::string("a JSON ") + value.type_name() + ", not an object"});
        continue;
      }
      // Filled in place: GCC 12 at -O3 takes the moved-from temporary of push_back({...}) for
      // maybe-uninitialized inside std::variant.
      PromptRow& row = file.rows.emplace_back();
      row.line_number = line_number;
      row.value = std::move(value);
    } catch (const Error& e) {
      file.bad_lines.push_back({line_number, std::string(e.what()).substr(6)});  // "JSON: "
    }
  }
  if (in.bad()) throw UsageError(std::string(flag) + " " + file.path + ": read error");
  if (file.rows.empty() && !file.bad_lines.empty())
    throw UsageError(std::string(flag) + " " + file.path + ": no usable row; " +
                     describe_bad_lines(file));

  if (parsed.slice) {
    RowRange range = resolve_row_slice(*parsed.slice, file.rows.size());
    file.rows = std::vector<PromptRow>(file.rows.begin() + static_cast<ptrdiff_t>(range.first),
                                       file.rows.begin() + static_cast<ptrdiff_t>(range.last));
  }
  return file;
}

std::string describe_bad_lines(const PromptFile& file) {
  constexpr size_t kShown = 5;
  std::string text = file.path + ": skipped " + std::to_string(file.bad_lines.size()) +
                     " malformed line" + (file.bad_lines.size() == 1 ? "" : "s") + " (";
  for (size_t i = 0; i < file.bad_lines.size() && i < kShown; ++i) {
    if (i) text += "; ";
    text +=
        "line " + std::to_string(file.bad_lines[i].line_number) + ": " + file.bad_lines[i].reason;
  }
  if (file.bad_lines.size() > kShown)
    text += "; and " + std::to_string(file.bad_lines.size() - kShown) + " more";
  return text + ")";
}

}  // namespace vime::data
